package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/ssh"
)

// runWrapper runs a command (the first argument) so that it dies with its
// session: the command runs in its own session (setsid) with stdin from
// /dev/null, while a watchdog reads the channel's stdin and kills the
// command's whole group at EOF, which comes when the caller cancels or the
// link drops. OpenSSH before 9.5 refuses "signal" requests ("session
// signalling requires privilege separation"), so a cancelled command would
// otherwise run on. A command killed by a signal is reported as killed by it,
// not as status 128+N.
const runWrapper = `if ! command -v setsid >/dev/null 2>&1; then exec sh -c "$1" </dev/null; fi
exec 3<&0
setsid sh -c "$1" </dev/null 3<&- &
c=$!
{ while read -r _ <&3; do :; done; kill -s KILL -- -$c 2>/dev/null; } &
w=$!
exec 3<&-
wait $c 2>/dev/null
s=$?
kill $w 2>/dev/null
if [ $s -gt 128 ] && [ $s -lt 160 ]; then trap - $((s - 128)) 2>/dev/null; kill -$((s - 128)) $$; fi
exit $s`

// Run executes cmd on the host under `sh -c`, whatever the login shell is
// (the scripts this package sends are POSIX sh); the login shell execs it,
// so that a signal that kills the command is reported as such. stdout and stderr are
// drained concurrently, so large outputs on both cannot stall each other.
// Cancelling ctx kills the command and everything it started in its
// process group on the host.
func (s *SSH) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%s: waiting to run %q: %w", s.Name(), shorten(cmd, 200), ctx.Err())
	}
	l, err := s.link(ctx)
	if err != nil {
		return nil, nil, err
	}
	sess, err := newSession(ctx, l)
	if err != nil {
		return nil, nil, s.failed(l, "opening a session", err)
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, nil, s.failed(l, "opening a session", err)
	}
	// Closing stdin is what tells the wrapper's watchdog to kill the command.
	defer stdin.Close()
	if err := sess.Start("exec sh -c " + Quote(runWrapper) + " sh " + Quote(cmd)); err != nil {
		return nil, nil, s.failed(l, fmt.Sprintf("running %q", shorten(cmd, 200)), err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		stdin.Close()
		sess.Signal(ssh.SIGKILL) // for servers that honour it
		sess.Close()
		// The output buffers may still be written to until the server
		// closes the channel, which it may never do: return none of them.
		return nil, nil, fmt.Errorf("%s: running %q: %w", s.Name(), shorten(cmd, 200), ctx.Err())
	}
	if err == nil {
		return stdout.Bytes(), stderr.Bytes(), nil
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		x := &ExitError{Host: s.Name(), Cmd: cmd, Status: ee.ExitStatus(), Stderr: stderr.Bytes()}
		if sig := ee.Signal(); sig != "" {
			x.Status, x.Signal = -1, normalizeSignal(sig)
		}
		return stdout.Bytes(), stderr.Bytes(), x
	}
	// No exit status: the channel or the whole link went away.
	return stdout.Bytes(), stderr.Bytes(), s.failed(l, fmt.Sprintf("running %q", shorten(cmd, 200)), err)
}

// sessionRetries is how many times a refused session is asked for again:
// sshd frees a session's slot only once both sides have closed it, so a
// burst of short commands can find MaxSessions still full for a moment.
const sessionRetries = 8

// newSession opens a session on l, retrying with backoff while the server
// refuses for lack of a free session.
func newSession(ctx context.Context, l *link) (*ssh.Session, error) {
	wait := 20 * time.Millisecond
	for i := 0; ; i++ {
		sess, err := l.client.NewSession()
		var oe *ssh.OpenChannelError
		if err == nil || !errors.As(err, &oe) || i == sessionRetries {
			return sess, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}
