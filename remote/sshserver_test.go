package remote

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

// testSSHServer is an in-process SSH server on 127.0.0.1:0: exec requests
// run under this machine's sh, direct-tcpip dials from here, keepalives are
// answered. Stall freezes every connection open at that moment.
type testSSHServer struct {
	Addr     string
	Port     int
	HostKeys []ssh.Signer

	ln         net.Listener
	authorized sync.Map // string(public key wire form) → true
	stalled    atomic.Bool
	mu         sync.Mutex
	conns      []*stallConn
	wg         sync.WaitGroup
}

func newEd25519(t *testing.T) (ed25519.PrivateKey, ssh.Signer) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, s
}

func newECDSA(t *testing.T) ssh.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startTestSSHServer serves with the given host keys (a fresh ed25519 one
// when none) and lets in the given client keys.
func startTestSSHServer(t *testing.T, hostKeys []ssh.Signer, clients ...ssh.PublicKey) *testSSHServer {
	if len(hostKeys) == 0 {
		_, s := newEd25519(t)
		hostKeys = []ssh.Signer{s}
	}
	srv := &testSSHServer{HostKeys: hostKeys}
	for _, c := range clients {
		srv.authorized.Store(string(c.Marshal()), true)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.ln = ln
	srv.Addr = ln.Addr().String()
	srv.Port = ln.Addr().(*net.TCPAddr).Port
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if _, ok := srv.authorized.Load(string(k.Marshal())); ok {
				return nil, nil
			}
			return nil, errors.New("key not authorized")
		},
	}
	for _, k := range hostKeys {
		cfg.AddHostKey(k)
	}
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := &stallConn{Conn: c, srv: srv, unblock: make(chan struct{})}
			srv.mu.Lock()
			srv.conns = append(srv.conns, sc)
			srv.mu.Unlock()
			srv.wg.Add(1)
			go func() { defer srv.wg.Done(); srv.serve(sc, cfg) }()
		}
	}()
	t.Cleanup(srv.Close)
	return srv
}

// Close stops the server and every connection and waits for them.
func (s *testSSHServer) Close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Stall makes every connection open now stop reading and writing, as a
// host that vanished from the network would; new connections work.
func (s *testSSHServer) Stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.stalled.Store(true)
	}
}

// stallConn blocks Read and Write once stalled, until closed.
type stallConn struct {
	net.Conn
	srv       *testSSHServer
	stalled   atomic.Bool
	closeOnce sync.Once
	unblock   chan struct{}
}

func (c *stallConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.stalled.Load() {
		<-c.unblock
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *stallConn) Write(p []byte) (int, error) {
	if c.stalled.Load() {
		<-c.unblock
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

func (c *stallConn) Close() error {
	c.closeOnce.Do(func() { close(c.unblock) })
	return c.Conn.Close()
}

func (s *testSSHServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go func() {
		for r := range reqs {
			if r.WantReply {
				r.Reply(r.Type == "keepalive@openssh.com", nil)
			}
		}
	}()
	var wg sync.WaitGroup
	for nc := range chans {
		switch nc.ChannelType() {
		case "session":
			wg.Add(1)
			go func() { defer wg.Done(); serveSession(nc) }()
		case "direct-tcpip":
			wg.Add(1)
			go func() { defer wg.Done(); serveDirect(nc) }()
		default:
			nc.Reject(ssh.UnknownChannelType, "no")
		}
	}
	wg.Wait()
}

func serveSession(nc ssh.NewChannel) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	for r := range reqs {
		if r.Type != "exec" {
			if r.WantReply {
				r.Reply(r.Type == "env", nil)
			}
			continue
		}
		n := binary.BigEndian.Uint32(r.Payload)
		cmdline := string(r.Payload[4 : 4+n])
		r.Reply(true, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
		cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
		stdin, _ := cmd.StdinPipe()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if err := cmd.Start(); err != nil {
			cancel()
			return
		}
		go func() {
			io.Copy(stdin, ch)
			stdin.Close()
		}()
		// Like sshd, a closed channel only closes the command's stdin; what
		// the command does then is its own business.
		go ssh.DiscardRequests(reqs)
		err := cmd.Wait()
		cancel()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
				ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
					Signal     string
					CoreDumped bool
					Msg, Lang  string
				}{signalName(ws.Signal()), false, "", ""}))
				return
			}
			status = ee.ExitCode()
		}
		ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
		return
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "KILL"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	}
	return strconv.Itoa(int(s))
}

func serveDirect(nc ssh.NewChannel) {
	var p struct {
		Host     string
		Port     uint32
		OrigHost string
		OrigPort uint32
	}
	if err := ssh.Unmarshal(nc.ExtraData(), &p); err != nil {
		nc.Reject(ssh.ConnectionFailed, "bad payload")
		return
	}
	c, err := net.Dial("tcp", net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port))))
	if err != nil {
		nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		c.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	done := make(chan struct{}, 2)
	go func() { io.Copy(c, ch); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(ch, c); ch.CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
	ch.Close()
	c.Close()
}

// clientKey writes an unencrypted ed25519 key file and returns its path and
// public key.
func clientKey(t *testing.T, dir, name string) (string, ssh.PublicKey, ed25519.PrivateKey) {
	priv, s := newEd25519(t)
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pemEncode(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, s.PublicKey(), priv
}

// knownHostsLine is the known_hosts line for a server key at 127.0.0.1:port.
func knownHostsLine(port int, k ssh.PublicKey) string {
	return fmt.Sprintf("[127.0.0.1]:%d %s", port, ssh.MarshalAuthorizedKey(k))
}

func pemEncode(b *pem.Block) []byte { return pem.EncodeToMemory(b) }
