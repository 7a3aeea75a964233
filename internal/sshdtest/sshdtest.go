// Package sshdtest starts a real OpenSSH sshd on 127.0.0.1 for tests: a
// temporary config, a fresh host key and a fresh client key, so that tests
// (and end-to-end campaigns) reach this machine over SSH exactly as they
// would reach a GPU host.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHDPath is where sshd is looked for.
const SSHDPath = "/usr/sbin/sshd"

// Alias is the Host alias the generated ssh_config defines.
const Alias = "bakeoff-test"

// ReadyTimeout is how long Start waits for sshd to accept connections.
const ReadyTimeout = 15 * time.Second

// privSepDir is the privilege separation directory OpenSSH refuses to start
// without.
const privSepDir = "/run/sshd"

// Available reports whether a real sshd can be started here.
func Available() bool {
	_, err := os.Stat(SSHDPath)
	return err == nil
}

// Options adjust the server.
type Options struct {
	// Path, if set, is the PATH of every session (sshd's compiled-in default
	// otherwise), e.g. to put a fake nvidia-smi first.
	Path string
	// Config holds extra sshd_config lines, e.g. TrustedUserCAKeys.
	Config string
	// HostCA, if set, signs a host certificate for the host key (principal
	// 127.0.0.1) that sshd presents.
	HostCA ssh.Signer
	// ShellRC, if set, is a ~/.bashrc that the login shell reads before
	// every command, as bash does over SSH on a host with a shell profile
	// (conda or pyenv init, a module system): sessions get a HOME of their
	// own, Dir/host-home, holding it. Otherwise sessions skip ~/.bashrc.
	ShellRC string
}

// Server is a running sshd. Its files live in Dir.
type Server struct {
	Addr           string // "127.0.0.1:PORT"
	Port           int
	User           string // the current user, whom the server lets in
	KeyFile        string // the client's private key (OpenSSH format, no passphrase)
	KnownHostsFile string // holds the host key for [127.0.0.1]:PORT
	ConfigFile     string // an ssh_config with Host Alias → HostName, Port, User, IdentityFile
	Alias          string // Alias
	Dir            string // the temporary directory holding everything
	Home           string // Dir/home, with .ssh/config and .ssh/known_hosts
	HostKey        ssh.PublicKey
	ClientSigner   ssh.Signer

	t        testing.TB
	sshdConf string
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stderr   *testbin.SyncBuffer
}

// Start starts sshd on a free port of 127.0.0.1 and stops it when the test
// ends. It skips the test, saying why, where sshd is not installed.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	if !Available() {
		t.Skipf("sshdtest: %s not found; install openssh-server to run the real-sshd tests", SSHDPath)
	}
	if _, err := os.Stat(privSepDir); os.IsNotExist(err) {
		if err := os.MkdirAll(privSepDir, 0o755); err != nil {
			t.Skipf("sshdtest: cannot create %s, which sshd needs: %v", privSepDir, err)
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshdtest: current user: %v", err)
	}
	s := &Server{t: t, User: u.Username, Alias: Alias, Dir: t.TempDir()}
	s.Home = filepath.Join(s.Dir, "home")
	if err := os.MkdirAll(filepath.Join(s.Home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	hostSigner := writeKey(t, filepath.Join(s.Dir, "ssh_host_ed25519_key"))
	s.HostKey = hostSigner.PublicKey()
	s.KeyFile = filepath.Join(s.Dir, "id_ed25519")
	s.ClientSigner = writeKey(t, s.KeyFile)
	authorized := filepath.Join(s.Dir, "authorized_keys")
	if err := os.WriteFile(authorized, ssh.MarshalAuthorizedKey(s.ClientSigner.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}

	var lastErr error
	for range 3 { // a port picked free can be taken before sshd binds it
		s.Port = freePort(t)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		s.writeConfigs(t, authorized, o)
		if lastErr = s.start(); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("sshdtest: %v", lastErr)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) writeConfigs(t testing.TB, authorized string, o Options) {
	s.sshdConf = filepath.Join(s.Dir, "sshd_config")
	conf := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PermitRootLogin yes
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowTcpForwarding yes
PermitTunnel no
X11Forwarding no
UseDNS no
MaxStartups 100
LogLevel ERROR
Subsystem sftp internal-sftp
`, s.Port, filepath.Join(s.Dir, "ssh_host_ed25519_key"), filepath.Join(s.Dir, "sshd.pid"), authorized)
	// SHLVL=2 stops bash from sourcing ~/.bashrc for commands sent over
	// SSH (it does so when SSH_CLIENT is set and SHLVL is under 2): a
	// developer's pyenv or conda init there costs most of a second per
	// command and would make the tests measure the machine, not the code.
	env := "SetEnv SHLVL=2"
	if o.ShellRC != "" {
		// SHLVL=0 makes bash a top-level shell again, one that reads
		// $HOME/.bashrc: a HOME in the test's directory, never the
		// machine's own.
		home := filepath.Join(s.Dir, "host-home")
		if err := os.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(home, ".bashrc"), o.ShellRC, 0o644)
		env = "SetEnv SHLVL=0 HOME=" + home
	}
	if o.Path != "" {
		env += " PATH=" + o.Path
	}
	conf += env + "\n"
	if o.HostCA != nil {
		cert := &ssh.Certificate{Key: s.HostKey, CertType: ssh.HostCert, KeyId: "bakeoff test host",
			ValidPrincipals: []string{"127.0.0.1"}, ValidBefore: ssh.CertTimeInfinity}
		if err := cert.SignCert(rand.Reader, o.HostCA); err != nil {
			t.Fatalf("sshdtest: signing the host certificate: %v", err)
		}
		certFile := filepath.Join(s.Dir, "ssh_host_ed25519_key-cert.pub")
		write(t, certFile, string(ssh.MarshalAuthorizedKey(cert)), 0o644)
		conf += "HostCertificate " + certFile + "\n"
	}
	if o.Config != "" {
		conf += strings.TrimRight(o.Config, "\n") + "\n"
	}
	write(t, s.sshdConf, conf, 0o600)

	s.KnownHostsFile = filepath.Join(s.Dir, "known_hosts")
	known := fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, ssh.MarshalAuthorizedKey(s.HostKey))
	write(t, s.KnownHostsFile, known, 0o600)
	write(t, filepath.Join(s.Home, ".ssh", "known_hosts"), known, 0o600)

	s.ConfigFile = filepath.Join(s.Dir, "ssh_config")
	cfg := fmt.Sprintf("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  UserKnownHostsFile %s\n",
		s.Alias, s.Port, s.User, s.KeyFile, filepath.Join(s.Home, ".ssh", "known_hosts"))
	write(t, s.ConfigFile, cfg, 0o600)
	write(t, filepath.Join(s.Home, ".ssh", "config"), cfg, 0o600)
}

// Env is the environment for a program (a CLI run) that should find this
// server as Alias through $HOME/.ssh/config and $HOME/.ssh/known_hosts, with
// no agent.
func (s *Server) Env() map[string]string {
	return map[string]string{"HOME": s.Home, "SSH_AUTH_SOCK": ""}
}

// Getenv is Env as a lookup function.
func (s *Server) Getenv(k string) string { return s.Env()[k] }

// start runs sshd in the foreground as a child and waits until it answers.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// sshd re-executes itself and insists on an absolute path.
	cmd := exec.Command(SSHDPath, "-D", "-e", "-f", s.sshdConf)
	s.stderr = &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sshd: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(ReadyTimeout)
	for {
		select {
		case <-done:
			return fmt.Errorf("sshd exited at start: %s", strings.TrimSpace(s.stderr.String()))
		default:
		}
		if banner(s.Addr) {
			// Another server may have taken the port between freePort and
			// sshd's bind: only our host key proves it is ours.
			if err := s.verify(); err != nil {
				s.killLocked()
				return fmt.Errorf("the server on %s is not ours: %w", s.Addr, err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			s.killLocked()
			return fmt.Errorf("sshd did not answer on %s within %s: %s", s.Addr, ReadyTimeout, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// banner reports whether an SSH server greets on addr.
func banner(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4)
	_, err = c.Read(buf)
	return err == nil && string(buf) == "SSH-"
}

// verify logs in with the client key, accepting only our host key.
func (s *Server) verify() error {
	c, err := ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.ClientSigner)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey),
		// The plain key, even when a host certificate is offered too.
		HostKeyAlgorithms: []string{s.HostKey.Type()},
		Timeout:           ReadyTimeout,
	})
	if err != nil {
		return err
	}
	return c.Close()
}

// Stderr returns what sshd has logged so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// Kill kills sshd and every connection it serves (their per-connection
// processes), as a crash or reboot of the host's sshd would. Processes that
// sessions started in a new session (setsid) live on.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	// Each connection's sshd is a child that moved to its own session;
	// killing the listener alone leaves them serving.
	for _, c := range descendants(pid) {
		syscall.Kill(c, syscall.SIGKILL)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// Restart starts sshd again on the same port with the same keys, after Kill
// (or kills it first).
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Stop kills sshd and its connections; it is registered with t.Cleanup.
func (s *Server) Stop() { s.Kill() }

// descendants returns the pids whose parent chain leads to pid, children
// before their own children, read from /proc.
func descendants(pid int) []int {
	parent := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(st[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[pp] = append(parent[pp], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range parent[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// writeKey writes a fresh ed25519 private key (OpenSSH format) and its .pub.
func writeKey(t testing.TB, path string) ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "bakeoff test key")
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(pem.EncodeToMemory(block)), 0o600)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path+".pub", string(ssh.MarshalAuthorizedKey(signer.PublicKey())), 0o644)
	return signer
}

func write(t testing.TB, path, content string, mode os.FileMode) {
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
