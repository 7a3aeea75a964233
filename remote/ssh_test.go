package remote

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshEnv is a fake home for one test: HOME and, optionally, an agent.
type sshEnv struct {
	home, sshDir, known, config string
	vars                        map[string]string
}

func newSSHEnv(t *testing.T) *sshEnv {
	home := t.TempDir()
	e := &sshEnv{home: home, sshDir: filepath.Join(home, ".ssh"), vars: map[string]string{"HOME": home}}
	os.MkdirAll(e.sshDir, 0o700)
	e.known = filepath.Join(e.sshDir, "known_hosts")
	e.config = filepath.Join(e.sshDir, "config")
	return e
}

func (e *sshEnv) getenv(k string) string { return e.vars[k] }

func (e *sshEnv) writeConfig(t *testing.T, s string) {
	if err := os.WriteFile(e.config, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *sshEnv) addKnown(t *testing.T, port int, k ssh.PublicKey) {
	f, err := os.OpenFile(e.known, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(knownHostsLine(port, k))
	f.Close()
}

// startAgent serves an in-process ssh-agent holding keys on a unix socket
// and points SSH_AUTH_SOCK at it.
func (e *sshEnv) startAgent(t *testing.T, keys ...ed25519.PrivateKey) {
	var added []agent.AddedKey
	for _, k := range keys {
		added = append(added, agent.AddedKey{PrivateKey: k})
	}
	e.startAgentWith(t, added...)
}

// startAgentWith is startAgent for keys with certificates.
func (e *sshEnv) startAgentWith(t *testing.T, keys ...agent.AddedKey) {
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); agent.ServeAgent(kr, c); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	e.vars["SSH_AUTH_SOCK"] = sock
}

// opts are test options: short timeouts, the fake home.
func (e *sshEnv) opts(target string) SSHOptions {
	return SSHOptions{Target: target, Getenv: e.getenv, ConnectTimeout: 5 * time.Second, KeepaliveInterval: -1}
}

func dial(t *testing.T, o SSHOptions) (*SSH, error) {
	h, err := DialSSH(testCtx(t), o)
	if err == nil {
		t.Cleanup(func() { h.Close() })
	}
	return h, err
}

func TestSSHHostKeys(t *testing.T) {
	dir := t.TempDir()
	keyFile, pub, _ := clientKey(t, dir, "id")
	ed := func() ssh.Signer { _, s := newEd25519(t); return s }()
	ec := newECDSA(t)
	srv := startTestSSHServer(t, []ssh.Signer{ed, ec}, pub)
	other := func() ssh.Signer { _, s := newEd25519(t); return s }()

	tests := []struct {
		name      string
		known     []ssh.PublicKey // in known_hosts before
		acceptNew bool
		wantErr   string // "" = connects; "unknown" or "changed"
	}{
		{"match ed25519", []ssh.PublicKey{ed.PublicKey()}, false, ""},
		// Only the ECDSA key is known: the client must ask for it, not
		// for its default first choice.
		{"match the non-default key type", []ssh.PublicKey{ec.PublicKey()}, false, ""},
		{"match hashed", nil, false, "hashed"},
		{"unknown", nil, false, "unknown"},
		{"accept-new", nil, true, ""},
		{"changed", []ssh.PublicKey{other.PublicKey()}, false, "changed"},
		{"changed despite accept-new", []ssh.PublicKey{other.PublicKey()}, true, "changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSSHEnv(t)
			for _, k := range tt.known {
				e.addKnown(t, srv.Port, k)
			}
			if tt.wantErr == "hashed" { // HashKnownHosts yes
				tt.wantErr = ""
				line := knownhosts.Line([]string{knownhosts.HashHostname(fmt.Sprintf("[127.0.0.1]:%d", srv.Port))}, ed.PublicKey())
				os.WriteFile(e.known, []byte(line+"\n"), 0o600)
			}
			o := e.opts(fmt.Sprintf("me@127.0.0.1:%d", srv.Port))
			o.IdentityFiles, o.AcceptNew = []string{keyFile}, tt.acceptNew
			h, err := dial(t, o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if out, _, err := h.Run(testCtx(t), "echo ok"); err != nil || string(out) != "ok\n" {
					t.Fatalf("Run = %q, %v", out, err)
				}
				if tt.acceptNew {
					// Added: a second connection without accept-new trusts it.
					b, _ := os.ReadFile(e.known)
					if !strings.Contains(string(b), fmt.Sprintf("[127.0.0.1]:%d", srv.Port)) {
						t.Fatalf("known_hosts after accept-new: %q", b)
					}
					o.AcceptNew = false
					if _, err := dial(t, o); err != nil {
						t.Fatalf("second dial: %v", err)
					}
				}
				return
			}
			var he *HostKeyError
			if !errors.As(err, &he) {
				t.Fatalf("DialSSH error = %v; want *HostKeyError", err)
			}
			if he.Changed != (tt.wantErr == "changed") {
				t.Errorf("Changed = %v; want %s", he.Changed, tt.wantErr)
			}
			msg := err.Error()
			for _, want := range []string{o.Target, "SHA256:", fmt.Sprintf("[127.0.0.1]:%d", srv.Port)} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if tt.wantErr == "unknown" && !strings.Contains(msg, "accept_new") {
				t.Errorf("error %q does not say how to trust the host", msg)
			}
			if tt.wantErr == "changed" && !strings.Contains(msg, "ssh-keygen -R") {
				t.Errorf("error %q does not say how to remove the old key", msg)
			}
			if b, _ := os.ReadFile(e.known); tt.wantErr == "changed" && strings.Count(string(b), "\n") != len(tt.known) {
				t.Errorf("known_hosts changed after a refused key: %q", b)
			}
		})
	}
}

// TestSSHHostKeyAlias: with HostKeyAlias the host key is checked, and
// recorded by accept_new, under the alias, not under 127.0.0.1:PORT.
func TestSSHHostKeyAlias(t *testing.T) {
	e := newSSHEnv(t)
	keyFile, pub, _ := clientKey(t, e.sshDir, "id")
	srv := startTestSSHServer(t, nil, pub)
	e.writeConfig(t, fmt.Sprintf("Host gpu-box\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  HostKeyAlias gpu-box.fleet\n", srv.Port, keyFile))
	// Known under host:port only: not enough with an alias.
	e.addKnown(t, srv.Port, srv.HostKeys[0].PublicKey())
	_, err := dial(t, e.opts("gpu-box"))
	var he *HostKeyError
	if !errors.As(err, &he) || he.Address != "gpu-box.fleet" {
		t.Fatalf("DialSSH with the key known only under host:port = %v; want a HostKeyError for gpu-box.fleet", err)
	}
	o := e.opts("gpu-box")
	o.AcceptNew = true
	if _, err := dial(t, o); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(e.known)
	if !strings.Contains(string(b), "\ngpu-box.fleet ssh-ed25519 ") {
		t.Fatalf("known_hosts after accept-new under an alias: %q", b)
	}
	if _, err := dial(t, e.opts("gpu-box")); err != nil {
		t.Fatalf("second dial, key known under the alias: %v", err)
	}
}

func TestSSHAuth(t *testing.T) {
	dir := t.TempDir()
	plainFile, plainPub, _ := clientKey(t, dir, "id_plain")
	// An encrypted key whose passphrase nobody can type.
	encPriv, encSigner := newEd25519(t)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(encPriv, "enc", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	encFile := filepath.Join(dir, "id_enc")
	os.WriteFile(encFile, pemEncode(block), 0o600)
	agentPriv, agentSigner := newEd25519(t)
	srv := startTestSSHServer(t, nil, plainPub, encSigner.PublicKey(), agentSigner.PublicKey())

	tests := []struct {
		name    string
		config  string // IdentityFile lines for the alias
		agent   []ed25519.PrivateKey
		wantErr []string
	}{
		{"identity file from config with ~", "IdentityFile ~/.ssh/id_plain", nil, nil},
		{"agent", "", []ed25519.PrivateKey{agentPriv}, nil},
		{"encrypted key, no agent", "IdentityFile ~/.ssh/id_enc", nil, []string{"id_enc", "encrypted", "ssh-add"}},
		{"encrypted key held by the agent", "IdentityFile ~/.ssh/id_enc", []ed25519.PrivateKey{encPriv}, nil},
		{"key not authorized", "IdentityFile ~/.ssh/id_other", nil, []string{"gpu", "login as me"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSSHEnv(t)
			for _, f := range []string{plainFile, encFile} {
				b, _ := os.ReadFile(f)
				os.WriteFile(filepath.Join(e.sshDir, filepath.Base(f)), b, 0o600)
			}
			clientKey(t, e.sshDir, "id_other")
			e.addKnown(t, srv.Port, srv.HostKeys[0].PublicKey())
			e.writeConfig(t, fmt.Sprintf("Host gpu\n  HostName 127.0.0.1\n  Port %d\n  User me\n  %s\n", srv.Port, tt.config))
			if tt.agent != nil {
				e.startAgent(t, tt.agent...)
			}
			h, err := dial(t, e.opts("gpu"))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := h.Run(testCtx(t), "true"); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("DialSSH succeeded")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestSSHInProcess runs the command checks that need no real sshd.
func TestSSHInProcess(t *testing.T) {
	e := newSSHEnv(t)
	keyFile, pub, _ := clientKey(t, e.sshDir, "id_ed25519") // a default key name
	_ = keyFile
	srv := startTestSSHServer(t, nil, pub)
	e.addKnown(t, srv.Port, srv.HostKeys[0].PublicKey())
	h, err := dial(t, e.opts(fmt.Sprintf("127.0.0.1:%d", srv.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("RunExit", func(t *testing.T) { suiteRunExit(t, h) })
	t.Run("BigOutput", func(t *testing.T) { suiteBigOutput(t, h) })
	t.Run("Tunnel", func(t *testing.T) { suiteTunnel(t, h) })
}

// suiteTunnel carries 64 HTTP requests at once through h.Dial: the server
// answers none until all 64 are in, so they must be concurrent streams.
func suiteTunnel(t *testing.T, h Host) {
	const streams = 64
	var in atomic.Int32
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if in.Add(1) == streams {
			close(all)
		}
		select {
		case <-all:
			io.WriteString(w, "ok "+r.URL.Path)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{
		DialContext:         h.Dial,
		MaxIdleConnsPerHost: streams,
	}}
	defer client.CloseIdleConnections()
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/%d", srv.URL, i), nil)
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if string(b) != fmt.Sprintf("ok /%d", i) {
				errs <- fmt.Errorf("stream %d got %q", i, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Dial(cctx, "tcp", srv.Listener.Addr().String()); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with a cancelled context = %v; want context.Canceled", err)
	}
}

// TestSSHHandshakeDeadline: a server that accepts TCP and never speaks
// must fail the dial after the connect timeout, not hang it.
func TestSSHHandshakeDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, silent
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	e := newSSHEnv(t)
	clientKey(t, e.sshDir, "id_ed25519")
	o := e.opts(ln.Addr().String())
	o.ConnectTimeout = 300 * time.Millisecond
	_, err = dial(t, o)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("DialSSH to a silent server = %v; want a deadline error naming the host", err)
	}
}

// TestSSHKeepaliveStall: the host stops answering mid-command; the
// watchdog closes the link, the call fails with ErrDisconnected instead of
// hanging, and the next call reconnects.
func TestSSHKeepaliveStall(t *testing.T) {
	e := newSSHEnv(t)
	_, pub, _ := clientKey(t, e.sshDir, "id_ed25519")
	srv := startTestSSHServer(t, nil, pub)
	e.addKnown(t, srv.Port, srv.HostKeys[0].PublicKey())
	o := e.opts(fmt.Sprintf("127.0.0.1:%d", srv.Port))
	o.KeepaliveInterval, o.KeepaliveMax = 50*time.Millisecond, 2
	o.ReconnectBackoff = 10 * time.Millisecond
	h, err := dial(t, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	started := filepath.Join(t.TempDir(), "started")
	errc := make(chan error, 1)
	go func() { _, _, err := h.Run(ctx, "touch "+Quote(started)+"; sleep 30"); errc <- err }()
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	srv.Stall()
	if err := <-errc; !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Run on a stalled link = %v; want ErrDisconnected", err)
	}
	out, _, err := h.Run(ctx, "echo again")
	if err != nil || string(out) != "again\n" {
		t.Fatalf("Run after reconnect = %q, %v", out, err)
	}
}

// TestSSHProxyJump reaches a target through two jump hosts, all from the
// ssh config, each hop's host key checked and named in errors.
func TestSSHProxyJump(t *testing.T) {
	e := newSSHEnv(t)
	_, pub, _ := clientKey(t, e.sshDir, "id_jump")
	_, tpub, _ := clientKey(t, e.sshDir, "id_target")
	hop1 := startTestSSHServer(t, nil, pub)
	hop2 := startTestSSHServer(t, nil, pub)
	target := startTestSSHServer(t, nil, tpub)
	e.writeConfig(t, fmt.Sprintf(`Host jump1
  HostName 127.0.0.1
  Port %d
  IdentityFile ~/.ssh/id_jump
Host jump2
  HostName 127.0.0.1
  Port %d
  User hopper
  IdentityFile %%d/.ssh/id_jump
Host gpu-box
  HostName 127.0.0.1
  Port %d
  User me
  IdentityFile ~/.ssh/id_target
  ProxyJump jump1,jump2
`, hop1.Port, hop2.Port, target.Port))
	e.addKnown(t, hop1.Port, hop1.HostKeys[0].PublicKey())
	e.addKnown(t, target.Port, target.HostKeys[0].PublicKey())

	// jump2's key is not known yet: the error names that hop.
	_, err := dial(t, e.opts("gpu-box"))
	var he *HostKeyError
	if !errors.As(err, &he) || he.Host != "jump2" || !strings.Contains(err.Error(), "jump2") {
		t.Fatalf("DialSSH with an unknown middle hop = %v; want a HostKeyError for jump2", err)
	}
	e.addKnown(t, hop2.Port, hop2.HostKeys[0].PublicKey())
	h, err := dial(t, e.opts("gpu-box"))
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := h.Run(testCtx(t), "echo through"); err != nil || string(out) != "through\n" {
		t.Fatalf("Run through two hops = %q, %v", out, err)
	}
	if len(h.hops) != 3 || h.hops[1].User != "hopper" {
		t.Errorf("hops = %+v", h.hops)
	}
	t.Run("Tunnel", func(t *testing.T) { suiteTunnel(t, h) })

	// A hop that is down: the error names it.
	hop1.Close()
	h.Drop()
	h.opt.ReconnectAttempts = 1
	_, _, err = h.Run(testCtx(t), "true")
	if err == nil || !strings.Contains(err.Error(), "jump1") {
		t.Fatalf("Run with the first hop down = %v; want an error naming jump1", err)
	}
}
