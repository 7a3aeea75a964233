package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Defaults for SSH connections.
const (
	// DefaultConnectTimeout bounds the TCP connect and the SSH handshake of
	// each hop.
	DefaultConnectTimeout = 20 * time.Second
	// DefaultKeepaliveInterval is how often an idle link is probed
	// (keepalive@openssh.com), like ServerAliveInterval.
	DefaultKeepaliveInterval = 15 * time.Second
	// DefaultKeepaliveMax is how many probes in a row may go unanswered
	// before the link is declared dead and closed, like ServerAliveCountMax.
	DefaultKeepaliveMax = 3
	// DefaultReconnectAttempts is how many times a call tries to bring a
	// dropped link back before failing.
	DefaultReconnectAttempts = 5
	// DefaultReconnectBackoff is the wait before the second attempt; it
	// doubles up to DefaultReconnectMaxBackoff.
	DefaultReconnectBackoff    = 500 * time.Millisecond
	DefaultReconnectMaxBackoff = 10 * time.Second
	// DefaultMaxSessions is how many commands run at once on one connection;
	// more wait for a slot. OpenSSH's sshd allows 10 sessions per connection
	// (MaxSessions) and sftp holds one.
	DefaultMaxSessions = 8
	// deadLinkGrace is how long a failed call waits to learn whether its
	// link died under it (the error can arrive just before the link's end).
	deadLinkGrace = time.Second
)

// SSHOptions say how to reach a host over SSH. Zero values are OpenSSH's
// defaults for the current user.
type SSHOptions struct {
	// Target is an alias from the ssh config or [user@]host[:port].
	Target string
	// ConfigFile is the ssh config to read (default ~/.ssh/config; a
	// missing file is an empty config).
	ConfigFile string
	// KnownHostsFile is where host keys are checked and, with AcceptNew,
	// added (default: the config's UserKnownHostsFile, else
	// ~/.ssh/known_hosts).
	KnownHostsFile string
	// AcceptNew adds an unknown host's key to KnownHostsFile, like
	// StrictHostKeyChecking=accept-new. A changed key always fails.
	AcceptNew bool
	// IdentityFiles are tried after the config's IdentityFile entries
	// (default, when both are empty: ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
	IdentityFiles []string
	// ConnectTimeout bounds connect and handshake per hop (default: the
	// ssh config's ConnectTimeout for the target, else
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// KeepaliveInterval and KeepaliveMax: the link is closed after
	// KeepaliveMax unanswered probes sent KeepaliveInterval apart
	// (defaults: the ssh config's ServerAliveInterval and
	// ServerAliveCountMax for the target, else DefaultKeepaliveInterval and
	// DefaultKeepaliveMax; a negative interval turns keepalives off).
	KeepaliveInterval time.Duration
	KeepaliveMax      int
	// ReconnectAttempts and ReconnectBackoff: see the defaults of the same
	// names.
	ReconnectAttempts int
	ReconnectBackoff  time.Duration
	// Getenv reads HOME and SSH_AUTH_SOCK (nil = os.Getenv).
	Getenv func(string) string
	// Via, when set, is a connected host the target is reached through as
	// a jump host (a Slurm cluster's login node, for its compute nodes): the
	// target is dialed over Via's connection, and the target's own
	// ProxyJump and ProxyCommand are not used. Its host key is checked as
	// any hop's. Via's link dropping drops the target's too; the target's
	// reconnect reconnects Via. Closing the target leaves Via open.
	Via *SSH
	// HostName is the address to connect to when the ssh config gives no
	// HostName for Target (a Slurm node's NodeAddr). As with a configured
	// HostName, the host key is checked under that address.
	HostName string
}

// SSH is a host reached over SSH. Calls share one connection; when it drops,
// the call in flight fails with an error wrapping ErrDisconnected and the
// next call reconnects (with backoff). Detached processes live on.
type SSH struct {
	opt  SSHOptions
	home string
	hops []hop // jump hosts first, the target last
	// notes name the ssh config's Match blocks that could not be evaluated.
	notes []string

	mu      sync.Mutex    // guards cur and closed
	cur     *link         //
	closed  bool          //
	dialing chan struct{} // held by the one caller reconnecting
	slots   chan struct{} // one per running command, DefaultMaxSessions
}

var _ Host = (*SSH)(nil)

// link is one connection; it is replaced, never repaired.
type link struct {
	client *ssh.Client
	jumps  []*ssh.Client
	dead   chan struct{} // closed when the connection ends

	sftpOnce sync.Once
	sftp     *sftp.Client
	sftpErr  error
}

func (l *link) isDead() bool {
	select {
	case <-l.dead:
		return true
	default:
		return false
	}
}

func (l *link) close() {
	// The client first: that ends an sftp start still in progress, which
	// the empty Do then waits for before l.sftp is read.
	l.client.Close()
	l.sftpOnce.Do(func() {})
	if l.sftp != nil {
		l.sftp.Close()
	}
	for i := len(l.jumps) - 1; i >= 0; i-- {
		l.jumps[i].Close()
	}
}

// DialSSH connects to o.Target as `ssh TARGET` would: the ssh config's
// HostName, User, Port, IdentityFile, ProxyJump and ProxyCommand; host keys checked
// against known_hosts; keys from the identity files and ssh-agent.
func DialSSH(ctx context.Context, o SSHOptions) (*SSH, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	// Settings left zero come from the ssh config's ConnectTimeout,
	// ServerAliveInterval and ServerAliveCountMax for the target, else the
	// defaults; these remember which were left zero.
	connectGiven, aliveGiven, maxGiven := o.ConnectTimeout > 0, o.KeepaliveInterval != 0, o.KeepaliveMax > 0
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.KeepaliveInterval == 0 {
		o.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if o.KeepaliveMax <= 0 {
		o.KeepaliveMax = DefaultKeepaliveMax
	}
	if o.ReconnectAttempts <= 0 {
		o.ReconnectAttempts = DefaultReconnectAttempts
	}
	if o.ReconnectBackoff <= 0 {
		o.ReconnectBackoff = DefaultReconnectBackoff
	}
	s := &SSH{opt: o, home: o.Getenv("HOME"), dialing: make(chan struct{}, 1), slots: make(chan struct{}, DefaultMaxSessions)}
	if s.home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			s.home = h
		}
	}
	if o.Target == "" {
		return nil, errors.New("ssh: no target host")
	}
	localUser := o.Getenv("USER")
	if u, err := user.Current(); err == nil {
		localUser = u.Username
	}
	cfgFile := o.ConfigFile
	if cfgFile == "" {
		cfgFile = filepath.Join(s.home, ".ssh", "config")
	}
	cfg, err := loadSSHConfig(cfgFile, s.home, localUser)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Target, err)
	}
	if o.Via != nil {
		// The way to the target is Via's; only the target's own block
		// applies.
		h, err := cfg.resolve(o.Target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Target, err)
		}
		s.hops = []hop{h}
	} else if s.hops, err = cfg.chain(o.Target, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Target, err)
	}
	if last := &s.hops[len(s.hops)-1]; o.HostName != "" {
		if _, alias, _, _ := splitTarget(o.Target); last.Host == alias {
			last.Host = o.HostName
		}
	}
	s.notes = cfg.notes
	target := s.hops[len(s.hops)-1]
	if !connectGiven && target.ConnectTimeout > 0 {
		s.opt.ConnectTimeout = target.ConnectTimeout
	}
	if !aliveGiven && target.AliveInterval > 0 {
		// ServerAliveInterval 0 (OpenSSH's "off") keeps the default: a
		// link that dies silently must not hang a campaign.
		s.opt.KeepaliveInterval = target.AliveInterval
	}
	if !maxGiven && target.AliveCountMax > 0 {
		s.opt.KeepaliveMax = target.AliveCountMax
	}
	l, err := s.connect(ctx)
	if err != nil {
		if len(cfg.notes) > 0 {
			// A Match block bakeoff skipped may be why ssh works and this
			// does not.
			return nil, fmt.Errorf("%w (ssh config: %s)", err, strings.Join(cfg.notes, "; "))
		}
		return nil, err
	}
	s.cur = l
	return s, nil
}

// ConfigNotes names the ssh config's Match blocks that were not applied
// because bakeoff cannot evaluate them (Match exec, localnetwork), as
// "FILE:LINE: why". ssh would have applied them where they match.
func (s *SSH) ConfigNotes() []string { return s.notes }

// Name returns the target as the user wrote it.
func (s *SSH) Name() string { return s.opt.Target }

// knownHostsFor returns the known_hosts files for h, the one accept-new
// writes first.
func (s *SSH) knownHostsFor(h hop) []string {
	if s.opt.KnownHostsFile != "" {
		return []string{s.opt.KnownHostsFile}
	}
	if len(h.KnownHosts) > 0 {
		return h.KnownHosts
	}
	return []string{filepath.Join(s.home, ".ssh", "known_hosts")}
}

// identitiesFor returns the key files to try for h, the configured ones
// first.
func (s *SSH) identitiesFor(h hop) []string {
	files := append(append([]string(nil), h.Identities...), s.opt.IdentityFiles...)
	if len(files) == 0 {
		for _, f := range defaultIdentities {
			files = append(files, filepath.Join(s.home, ".ssh", f))
		}
	}
	return files
}

func (s *SSH) getenv(k string) string { return s.opt.Getenv(k) }

// connect dials the chain and starts watching the new link.
func (s *SSH) connect(ctx context.Context) (*link, error) {
	c, jumps, err := s.dialChain(ctx)
	if err != nil {
		return nil, err
	}
	l := &link{client: c, jumps: jumps, dead: make(chan struct{})}
	go func() {
		c.Wait()
		close(l.dead)
		// A jump host's link outlives nothing behind it.
		for i := len(jumps) - 1; i >= 0; i-- {
			jumps[i].Close()
		}
	}()
	if s.opt.KeepaliveInterval > 0 {
		go keepalive(l, s.opt.KeepaliveInterval, s.opt.KeepaliveMax)
	}
	return l, nil
}

// link returns the live connection, reconnecting with backoff if the last
// one died. One caller reconnects at a time; the others wait for it or for
// their context. An untrusted host key or a failed login is not retried.
func (s *SSH) link(ctx context.Context) (*link, error) {
	if l, ok, err := s.current(); ok {
		return l, err
	}
	select {
	case s.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: waiting for the reconnect: %w", s.Name(), ctx.Err())
	}
	defer func() { <-s.dialing }()
	if l, ok, err := s.current(); ok { // another caller reconnected
		return l, err
	}
	backoff := s.opt.ReconnectBackoff
	var err error
	for attempt := 1; attempt <= s.opt.ReconnectAttempts; attempt++ {
		var l *link
		if l, err = s.connect(ctx); err == nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closed {
				l.close()
				return nil, fmt.Errorf("%s: connection closed", s.Name())
			}
			s.cur = l
			return l, nil
		}
		var hk *HostKeyError
		if errors.As(err, &hk) || isAuthFailure(err) || ctx.Err() != nil || attempt == s.opt.ReconnectAttempts {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: reconnecting: %w (last error: %v)", s.Name(), ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, DefaultReconnectMaxBackoff)
	}
	return nil, fmt.Errorf("%s: reconnecting: %w", s.Name(), err)
}

// current returns the live link (ok), or an error if s is closed (ok), or
// ok false when a reconnect is needed; a dead link is released.
func (s *SSH) current() (*link, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, true, fmt.Errorf("%s: connection closed", s.Name())
	}
	if s.cur != nil && !s.cur.isDead() {
		return s.cur, true, nil
	}
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	return nil, false, nil
}

// failed turns the error of a call on l into one that says whether the link
// died under it (wrapping ErrDisconnected).
func (s *SSH) failed(l *link, what string, err error) error {
	select {
	case <-l.dead:
	case <-time.After(deadLinkGrace):
		return fmt.Errorf("%s: %s: %w", s.Name(), what, err)
	}
	return fmt.Errorf("%s: %s: %w: %w", s.Name(), what, ErrDisconnected, err)
}

// Close closes the connection; later calls fail. Safe to call twice.
func (s *SSH) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	return nil
}

// Drop closes the current connection as if the network had failed, without
// closing s: the next call reconnects. It is for fault tests and for a
// caller that knows the link is bad.
func (s *SSH) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
}
