package remote

import (
	"context"
	"errors"
	"fmt"
)

// Ping reports whether the host's sshd answers: a keepalive@openssh.com
// request on the connection (reconnected first if it dropped), which sshd
// answers itself. No session is opened and no shell started, so a login
// shell that is slow to start (conda or pyenv init in ~/.bashrc, a home on
// a stalled NFS server) cannot make a live host look lost, and a host whose
// session slots are all busy still answers.
//
// ctx bounds the wait. A probe still unanswered when ctx's deadline passes
// closes the link, as the keepalive watchdog closes a dead one, so that the
// next call reconnects: give Ping no shorter deadline than a live link may
// take to answer.
func (s *SSH) Ping(ctx context.Context) error {
	l, err := s.link(ctx)
	if err != nil {
		return err
	}
	// SendRequest takes no context: the wait for its reply is abandoned
	// instead, and the reply, if one ever comes, lands in the buffer.
	done := make(chan error, 1)
	go func() { done <- l.probe() }()
	select {
	case err := <-done:
		if err != nil {
			return s.failed(l, "waiting for sshd to answer a keepalive", err)
		}
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			l.client.Close()
		}
		return fmt.Errorf("%s: waiting for sshd to answer a keepalive: %w", s.Name(), ctx.Err())
	}
}
