package testhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// User is the account sshd lets the test client in as. Tests run as root
// (namespaces need it), so the host's user is root too.
const User = "root"

// Host is a machine reachable over SSH, made of a network namespace on this
// one. Its fields are read-only after New.
type Host struct {
	Name  string // namespace name, also used in messages
	Alias string // Host alias in the client's ssh config
	IP    string // address of the host inside its namespace
	Addr  string // IP:22, where sshd listens
	// Home is a HOME for the client: .ssh/config (with Alias), known_hosts
	// (with the host key), id_ed25519. Run bakeoff with HOME=Home.
	Home       string
	KeyFile    string // the client's private key
	KnownHosts string // Home/.ssh/known_hosts
	SSHConfig  string // Home/.ssh/config
	// Dir holds the host's own files: sshd's config, key and log, BinDir,
	// Workdir and the fake GPU state.
	Dir string
	// Workdir is an empty directory a campaign can use as host.workdir.
	Workdir string
	// BinDir is first on the PATH of every SSH session; it holds
	// nvidia-smi when WithNvidiaSMI is given.
	BinDir string
	// SimState is BAKEOFF_SIM_STATE in every SSH session: the directory
	// through which the sim and its fake nvidia-smi share "GPU memory".
	SimState string
	SSHDLog  string        // sshd's own log (-e), for a failing test to show
	HostKey  ssh.PublicKey // the key sshd presents now

	t              testing.TB
	link           *link
	sshdConfig     string
	hostKeyPath    string
	authorizedKeys string
	mu             sync.Mutex
	sshd           *sshd
}

type options struct {
	nvidiaSMI  string
	passphrase string
	env        []string
}

// Option changes how New builds a host.
type Option func(*options)

// WithNvidiaSMI puts a file named nvidia-smi, a link to the given bakeoff
// binary, first on the host's PATH: bakeoff answers as the sim's fake
// nvidia-smi when called by that name.
func WithNvidiaSMI(bakeoff string) Option { return func(o *options) { o.nvidiaSMI = bakeoff } }

// WithEnv adds NAME=VALUE to the environment of every SSH session, as a
// host's profile would (e.g. SLURM_CONF on a cluster's login node). Values
// must not contain white space or quotes.
func WithEnv(name, value string) Option {
	return func(o *options) { o.env = append(o.env, name+"="+value) }
}

// WithKeyPassphrase encrypts the client's private key with passphrase.
func WithKeyPassphrase(passphrase string) Option {
	return func(o *options) { o.passphrase = passphrase }
}

// New makes a host and registers its teardown with t.Cleanup. It skips the
// test when this machine cannot make network namespaces.
func New(t testing.TB, opts ...Option) *Host {
	t.Helper()
	if reason := unsupported(); reason != "" {
		t.Skipf("testhost: %s", reason)
	}
	// SHLVL=1 keeps bash, the sessions' shell, from reading the test
	// machine's root ~/.bashrc: bash reads it for sshd only as a top-level
	// shell. The hosts stand for GPU hosts, not for whatever profile the
	// machine running the tests has (one that takes seconds, such as
	// pyenv's init rehashing under a lock every session shares, costs that
	// on each of a campaign's hundreds of commands and reads as a lost
	// link).
	o := options{env: []string{"SHLVL=1"}}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	sweepLeftovers(ctx)

	h := &Host{t: t, Dir: t.TempDir()}
	l, err := newLink(ctx)
	if err != nil {
		t.Fatalf("testhost: %v", err)
	}
	h.link = l
	// Registered after TempDir, so it runs first: processes die before
	// their files go.
	t.Cleanup(func() {
		if err := h.destroy(context.Background()); err != nil {
			t.Errorf("testhost %s: cleanup: %v", h.Name, err)
		}
	})
	h.Name, h.IP = l.ns, l.innerIP
	h.Addr = net.JoinHostPort(h.IP, "22")
	h.Alias = "th-" + l.ns[len(l.ns)-6:]
	if err := h.prepare(ctx, o); err != nil {
		t.Fatalf("testhost %s: %v", h.Name, err)
	}
	if err := h.startSSHD(ctx); err != nil {
		t.Fatalf("testhost %s: %v", h.Name, err)
	}
	return h
}

// unsupported says why this machine cannot make hosts, "" when it can.
func unsupported() string {
	if os.Geteuid() != 0 {
		return "network namespaces need root; run the tests as root (CI does)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "iproute2's `ip` is not installed (apt-get install iproute2)"
	}
	if _, err := os.Stat(sshdPath); err != nil {
		return sshdPath + " is not installed (apt-get install openssh-server)"
	}
	return ""
}

// prepare writes keys, sshd's config and the client's home.
func (h *Host) prepare(ctx context.Context, o options) error {
	h.Workdir = filepath.Join(h.Dir, "work")
	h.BinDir = filepath.Join(h.Dir, "bin")
	h.SimState = filepath.Join(h.Dir, "gpu-state")
	h.Home = filepath.Join(h.Dir, "home")
	h.SSHDLog = filepath.Join(h.Dir, "sshd", "sshd.log")
	h.sshdConfig = filepath.Join(h.Dir, "sshd", "sshd_config")
	h.hostKeyPath = h.hostKeyFile()
	h.authorizedKeys = filepath.Join(h.Dir, "sshd", "authorized_keys")
	for _, d := range []string{h.Workdir, h.BinDir, h.SimState, filepath.Dir(h.SSHDLog), filepath.Join(h.Home, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if o.nvidiaSMI != "" {
		if err := os.Symlink(o.nvidiaSMI, filepath.Join(h.BinDir, "nvidia-smi")); err != nil {
			return fmt.Errorf("installing nvidia-smi: %w", err)
		}
	}
	hk, err := writeKey(h.hostKeyPath, "host-"+h.Name, "")
	if err != nil {
		return err
	}
	h.HostKey = hk.public
	h.KeyFile = filepath.Join(h.Home, ".ssh", "id_ed25519")
	ck, err := writeKey(h.KeyFile, "client-"+h.Name, o.passphrase)
	if err != nil {
		return err
	}
	if err := os.WriteFile(h.authorizedKeys, ssh.MarshalAuthorizedKey(ck.public), 0o600); err != nil {
		return fmt.Errorf("writing authorized_keys: %w", err)
	}
	h.KnownHosts = filepath.Join(h.Home, ".ssh", "known_hosts")
	h.SSHConfig = filepath.Join(h.Home, ".ssh", "config")
	if err := h.AddToHome(h.Home); err != nil {
		return err
	}
	return h.writeSSHDConfig(o.env)
}

// destroy tears the host down: every process in the namespace, the link,
// the namespace. The temporary files go with t.TempDir.
func (h *Host) destroy(ctx context.Context) error {
	h.mu.Lock()
	s := h.sshd
	h.mu.Unlock()
	err := h.link.destroy(ctx)
	if s != nil {
		<-s.done // reap the listener so no zombie outlives the test
	}
	return err
}

// LinkDown cuts the host's network link, like a pulled cable: packets to it
// vanish and nothing tells the client.
func (h *Host) LinkDown() {
	h.t.Helper()
	if err := h.link.setInner(context.Background(), false); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
}

// LinkUp restores the link cut by LinkDown and returns once it carries
// packets again. The veth's carrier comes back a moment after the command,
// and an address resolution that failed while the link was down stays
// failed until it is tried again, so a connection made at once can still
// find no route to the host: what a test wants to see of a link coming
// back is the host reachable.
func (h *Host) LinkUp() {
	h.t.Helper()
	ctx := context.Background()
	if err := h.link.setInner(ctx, true); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	if err := h.waitReachable(ctx); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
}

// waitReachable dials sshd until a packet gets to the host and back: a
// connection, or a refusal where sshd is down.
func (h *Host) waitReachable(ctx context.Context) error {
	deadline := time.Now().Add(sshdStartTimeout)
	var last error
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", h.Addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the link of %s was up but did not reach %s within %s: %v", h.Name, h.Addr, sshdStartTimeout, last)
}

// Exec runs a command inside the host's namespace (not through SSH) and
// returns its combined output.
func (h *Host) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	full := append([]string{"netns", "exec", h.Name, name}, args...)
	out, err := exec.CommandContext(ctx, "ip", full...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("running %s in %s: %w", name, h.Name, err)
	}
	return out, nil
}

// Process is one process running inside the host.
type Process struct {
	Pid     int
	Comm    string
	Cmdline string
}

// Processes lists what runs inside the host apart from sshd: servers,
// sweeps, orphans. A campaign that cleaned up after itself leaves none.
func (h *Host) Processes(ctx context.Context) ([]Process, error) {
	pids, err := nsPids(ctx, h.Name)
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, p := range pids {
		comm := procComm(p)
		if comm == "sshd" || comm == "" {
			continue
		}
		out = append(out, Process{Pid: p, Comm: comm, Cmdline: procCmdline(p)})
	}
	return out, nil
}
