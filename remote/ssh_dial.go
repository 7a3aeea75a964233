package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// dialChain connects through every hop in turn and returns the client of
// the last one, with the clients of the jump hosts it rides on (to close
// after it). Each hop's host key is checked; errors name the hop.
func (s *SSH) dialChain(ctx context.Context) (*ssh.Client, []*ssh.Client, error) {
	var jumps []*ssh.Client
	fail := func(err error) (*ssh.Client, []*ssh.Client, error) {
		for i := len(jumps) - 1; i >= 0; i-- {
			jumps[i].Close()
		}
		return nil, nil, err
	}
	var prev *ssh.Client
	for i, h := range s.hops {
		var conn net.Conn
		var err error
		dctx, cancel := context.WithTimeout(ctx, s.opt.ConnectTimeout)
		switch {
		case prev == nil && s.opt.Via != nil:
			conn, err = s.opt.Via.dialHop(dctx, h.Addr())
		case prev == nil && h.ProxyCommand != "":
			conn, err = startProxyCommand(h)
		case prev == nil:
			var d net.Dialer
			conn, err = d.DialContext(dctx, "tcp", h.Addr())
		default:
			conn, err = prev.DialContext(dctx, "tcp", h.Addr())
		}
		cancel()
		if err != nil {
			what := "connecting to " + h.Addr()
			if prev == nil && h.ProxyCommand != "" {
				what = "connecting to " + h.Addr() + " through ProxyCommand"
			}
			if prev == nil && s.opt.Via != nil {
				what = "connecting to " + h.Addr() + " through " + s.opt.Via.Name()
			}
			return fail(s.hopErr(i, what, err))
		}
		c, err := s.handshake(ctx, conn, h)
		if err != nil {
			conn.Close()
			return fail(s.hopErr(i, "", err))
		}
		if i < len(s.hops)-1 {
			jumps = append(jumps, c)
		}
		prev = c
	}
	return prev, jumps, nil
}

// hopErr names the hop (and, for a jump host, the target behind it).
func (s *SSH) hopErr(i int, what string, err error) error {
	h := s.hops[i]
	where := h.Name
	if i < len(s.hops)-1 {
		where = fmt.Sprintf("%s (jump host %d of %d on the way to %s)", h.Name, i+1, len(s.hops)-1, s.Name())
	}
	var hk *HostKeyError
	if errors.As(err, &hk) {
		return err // it names its hop already
	}
	if what == "" {
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: %s: %w", where, what, err)
}

// handshake runs the SSH handshake on conn for h, bounded by the connect
// timeout: a server that accepts TCP and never speaks must not hang us. The
// deadline is enforced by closing conn, since a channel to a jump host has
// no SetDeadline.
func (s *SSH) handshake(ctx context.Context, conn net.Conn, h hop) (*ssh.Client, error) {
	keys := hostKeys{files: s.knownHostsFor(h), acceptNew: s.opt.AcceptNew}
	cb, err := keys.callback(h.Name)
	if err != nil {
		return nil, err
	}
	algos, err := keys.algorithms(h.KeyName())
	if err != nil {
		return nil, err
	}
	a, err := newAuth(s.identitiesFor(h), h.Certificates, s.getenv("SSH_AUTH_SOCK"))
	if err != nil {
		return nil, err
	}
	defer a.Close() // signing happens during the handshake only
	if len(a.signers) == 0 {
		return nil, a.explain(errors.New("cannot authenticate"))
	}
	cfg := &ssh.ClientConfig{
		User:              h.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(a.signers...)},
		HostKeyCallback:   cb,
		HostKeyAlgorithms: algos,
		Timeout:           s.opt.ConnectTimeout,
	}
	done := make(chan struct{})
	timedOut := make(chan struct{})
	go func() {
		t := time.NewTimer(s.opt.ConnectTimeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		case <-ctx.Done():
		}
		close(timedOut)
		conn.Close()
	}()
	// The address given here is only what the host key is looked up as.
	cc, chans, reqs, err := ssh.NewClientConn(conn, h.KeyName(), cfg)
	close(done)
	if err != nil {
		select {
		case <-timedOut:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("ssh handshake: %w", ctx.Err())
			}
			return nil, fmt.Errorf("ssh handshake: no answer within %s: %w", s.opt.ConnectTimeout, context.DeadlineExceeded)
		default:
		}
		var hk *HostKeyError
		if errors.As(err, &hk) {
			return nil, hk
		}
		if isAuthFailure(err) {
			return nil, a.explain(fmt.Errorf("ssh login as %s: %w", h.User, err))
		}
		return nil, fmt.Errorf("ssh handshake: %w", err)
	}
	return ssh.NewClient(cc, chans, reqs), nil
}

// isAuthFailure reports whether the handshake failed at authentication;
// x/crypto says so only in its message.
func isAuthFailure(err error) bool {
	return strings.Contains(err.Error(), "unable to authenticate")
}

// dialHop opens a TCP stream to addr from this host, for a host that uses
// this one as its jump host (SSHOptions.Via); it reconnects this host's link
// first if it dropped.
func (s *SSH) dialHop(ctx context.Context, addr string) (net.Conn, error) {
	l, err := s.link(ctx)
	if err != nil {
		return nil, err
	}
	c, err := l.client.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name(), err)
	}
	return c, nil
}
