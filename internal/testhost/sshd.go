package testhost

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// sshdPath is OpenSSH's server; it must be started by absolute path because
// it re-executes itself for every connection.
const sshdPath = "/usr/sbin/sshd"

// privsepDir is the directory sshd chroots its unprivileged child into; the
// openssh-server package creates it at boot, a container may not have it.
const privsepDir = "/run/sshd"

// sshdStartTimeout bounds the wait for a fresh sshd to greet a client. It is
// a readiness wait, not an assertion: a busy machine only makes it slower.
const sshdStartTimeout = 30 * time.Second

// sshdConfig is the server's whole configuration. Sessions get PATH and the
// fake nvidia-smi's state file from SetEnv, as a GPU host's profile would
// give them the real one.
const sshdConfig = `# written by internal/testhost
ListenAddress %[1]s:22
HostKey %[2]s
AuthorizedKeysFile %[3]s
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
MaxStartups 100
MaxSessions 100
Subsystem sftp internal-sftp
SetEnv PATH=%[4]s BAKEOFF_SIM_STATE=%[5]s%[6]s
LogLevel VERBOSE
`

// sshd is one run of the server inside the namespace.
type sshd struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd.Wait returns
}

func (h *Host) writeSSHDConfig(env []string) error {
	path := h.BinDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	extra := ""
	for _, e := range env {
		extra += " " + e
	}
	cfg := fmt.Sprintf(sshdConfig, h.IP, h.hostKeyPath, h.authorizedKeys, path, h.SimState, extra)
	if err := os.WriteFile(h.sshdConfig, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("writing sshd config: %w", err)
	}
	return nil
}

// startSSHD starts sshd in the namespace and waits until it greets.
func (h *Host) startSSHD(ctx context.Context) error {
	if err := os.MkdirAll(privsepDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", privsepDir, err)
	}
	log, err := os.OpenFile(h.SSHDLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening sshd log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command("ip", "netns", "exec", h.Name, sshdPath, "-D", "-e", "-f", h.sshdConfig)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting sshd in %s: %w", h.Name, err)
	}
	s := &sshd{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	h.mu.Lock()
	h.sshd = s
	h.mu.Unlock()
	return h.waitGreeting(ctx, s)
}

// waitGreeting dials the server until it sends its SSH banner.
func (h *Host) waitGreeting(ctx context.Context, s *sshd) error {
	deadline := time.Now().Add(sshdStartTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("sshd in %s exited at start: %s", h.Name, h.tailSSHDLog())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := net.DialTimeout("tcp", h.Addr, time.Second)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && strings.HasPrefix(line, "SSH-2.0-") {
				return nil
			}
			err = fmt.Errorf("no greeting: %v", rerr)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("sshd in %s did not greet on %s within %s: %v; log: %s",
		h.Name, h.Addr, sshdStartTimeout, last, h.tailSSHDLog())
}

func (h *Host) tailSSHDLog() string {
	b, _ := os.ReadFile(h.SSHDLog)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// KillSSHD SIGKILLs every sshd process in the namespace: the listener and
// each connection's server, so open SSH sessions drop at once. Processes
// started through sshd that detached from it (a server under setsid) live on,
// as they would on a real host whose sshd died.
func (h *Host) KillSSHD() {
	h.t.Helper()
	if err := h.killSSHD(context.Background()); err != nil {
		h.t.Fatalf("testhost %s: %v", h.Name, err)
	}
}

func (h *Host) killSSHD(ctx context.Context) error {
	pids, err := nsPids(ctx, h.Name)
	if err != nil {
		return err
	}
	for _, p := range pids {
		if procComm(p) == "sshd" {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	h.mu.Lock()
	s := h.sshd
	h.sshd = nil
	h.mu.Unlock()
	if s != nil {
		select {
		case <-s.done:
		case <-time.After(killWait):
			return fmt.Errorf("sshd pid %d did not exit after SIGKILL", s.cmd.Process.Pid)
		}
	}
	return nil
}

// RestartSSHD starts sshd again (after KillSSHD, or to pick up a new host
// key) and waits until it greets.
func (h *Host) RestartSSHD() {
	h.t.Helper()
	ctx := context.Background()
	if err := h.killSSHD(ctx); err != nil {
		h.t.Fatalf("testhost %s: %v", h.Name, err)
	}
	if err := h.startSSHD(ctx); err != nil {
		h.t.Fatalf("testhost %s: %v", h.Name, err)
	}
}

// ChangeHostKey gives the server a new host key and restarts it, leaving
// the client's known_hosts with the old one: what a reinstalled host, or a
// man in the middle, looks like to the client.
func (h *Host) ChangeHostKey() {
	h.t.Helper()
	k, err := writeKey(h.hostKeyPath, "host-"+h.Name, "")
	if err != nil {
		h.t.Fatalf("testhost %s: %v", h.Name, err)
	}
	h.HostKey = k.public
	h.RestartSSHD()
}

func (h *Host) hostKeyFile() string { return filepath.Join(h.Dir, "sshd", "ssh_host_ed25519_key") }
