package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
)

// stuckShellRC is a ~/.bashrc that holds every session's login shell until
// the test lets it go, as a pyenv init waiting on a stale lock or a home on
// a hung NFS server does. It marks that it was read.
func stuckShellRC(t *testing.T) (rc, reading string, release func()) {
	dir := t.TempDir()
	reading, released := filepath.Join(dir, "reading"), filepath.Join(dir, "released")
	rc = fmt.Sprintf(": >%s\nwhile [ ! -e %s ]; do sleep 0.05; done\n", Quote(reading), Quote(released))
	return rc, reading, func() { os.WriteFile(released, nil, 0o644) }
}

// dialAnswering connects with o and checks that the host answers a Ping.
func dialAnswering(t *testing.T, o SSHOptions) *SSH {
	t.Helper()
	h, err := DialSSH(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	return h
}

func exists(path string) func() bool {
	return func() bool { _, err := os.Stat(path); return err == nil }
}

// TestSSHPingSlowLoginShell: while the login shell is stuck in ~/.bashrc,
// a command cannot even start, but Ping, which starts no shell, answers.
func TestSSHPingSlowLoginShell(t *testing.T) {
	rc, reading, release := stuckShellRC(t)
	s := sshdtest.StartWith(t, sshdtest.Options{ShellRC: rc})
	t.Cleanup(release) // before sshd is stopped: the shells end on their own
	h := dialTestSSHD(t, s)
	ctx := testCtx(t)

	ran := make(chan error, 1)
	go func() { _, _, err := h.Run(ctx, "true"); ran <- err }()
	waitFor(t, "the login shell to read ~/.bashrc", exists(reading))
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, _, err := h.Run(short, "true")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run(true) behind a stuck login shell = %v; want it still waiting at its deadline", err)
	}
	if err := h.Ping(ctx); err != nil {
		t.Fatalf("Ping behind a stuck login shell: %v", err)
	}
	select {
	case err := <-ran:
		t.Fatalf("Run(true) returned (%v) while the login shell was stuck: the shell was not the slow part", err)
	default:
	}
	release()
	if err := <-ran; err != nil {
		t.Fatalf("Run(true) once the login shell went on: %v", err)
	}
}

// TestSSHPingSSHDGone: with sshd and its connections killed, Ping fails at
// once with an error naming the host; once sshd is back, Ping reconnects.
func TestSSHPingSSHDGone(t *testing.T) {
	s := sshdtest.Start(t)
	h := dialAnswering(t, SSHOptions{Target: s.Alias, ConfigFile: s.ConfigFile, Getenv: s.Getenv,
		ConnectTimeout: 5 * time.Second, ReconnectAttempts: 2, ReconnectBackoff: 10 * time.Millisecond})
	ctx := testCtx(t)
	s.Kill()
	err := h.Ping(ctx)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Ping with sshd gone = %v (test context: %v); want a failure before the deadline", err, ctx.Err())
	}
	if !strings.Contains(err.Error(), s.Alias) {
		t.Errorf("error %q does not name the host", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := h.Ping(ctx); err != nil {
		t.Fatalf("Ping after sshd came back: %v", err)
	}
}

// TestSSHPingLinkCut: the network to the host is cut and keepalives are
// off, so nothing but Ping's deadline can notice. Ping fails at its
// deadline naming the host, and closes the link: a command left waiting on
// it fails as disconnected, and once the network is back the next Ping
// reconnects.
func TestSSHPingLinkCut(t *testing.T) {
	th := testhost.New(t)
	h := dialAnswering(t, SSHOptions{Target: th.Alias, ConnectTimeout: 5 * time.Second,
		KeepaliveInterval: -1, ReconnectBackoff: 10 * time.Millisecond,
		Getenv: func(k string) string { return map[string]string{"HOME": th.Home}[k] }})
	ctx := testCtx(t)
	started := filepath.Join(t.TempDir(), "started")
	ran := make(chan error, 1)
	go func() { _, _, err := h.Run(ctx, "touch "+Quote(started)+"; sleep 300"); ran <- err }()
	waitFor(t, "the command to start", exists(started))

	th.LinkDown()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := h.Ping(pctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), th.Alias) {
		t.Fatalf("Ping over a cut link = %v; want its deadline, naming %s", err, th.Alias)
	}
	if err := <-ran; !errors.Is(err, ErrDisconnected) {
		t.Fatalf("a command on the link Ping gave up on = %v; want ErrDisconnected", err)
	}
	th.LinkUp()
	if err := h.Ping(ctx); err != nil {
		t.Fatalf("Ping once the link is back: %v", err)
	}
}
