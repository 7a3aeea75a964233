package testhost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sshTo runs a command on h through the OpenSSH client, the way a user
// would: `ssh ALIAS CMD` with HOME=h.Home.
func sshTo(h *Host, connectTimeout int, cmd string) (string, error) {
	c := exec.Command("ssh", "-F", h.SSHConfig, "-o", "ConnectTimeout="+strconv.Itoa(connectTimeout), h.Alias, cmd)
	c.Env = append(os.Environ(), "HOME="+h.Home, "SSH_AUTH_SOCK=")
	out, err := c.CombinedOutput()
	return string(out), err
}

func needSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("the OpenSSH client is not installed (apt-get install openssh-client)")
	}
}

func TestHostServesSSH(t *testing.T) {
	needSSH(t)
	h := New(t, WithNvidiaSMI("/bin/true"))
	out, err := sshTo(h, 10, `echo "$PATH|$BAKEOFF_SIM_STATE"; command -v nvidia-smi; cat /proc/net/dev`)
	if err != nil {
		t.Fatalf("ssh %s: %v\n%s\nsshd log:\n%s", h.Alias, err, out, h.tailSSHDLog())
	}
	for _, want := range []string{h.BinDir + ":", "|" + h.SimState, filepath.Join(h.BinDir, "nvidia-smi"), h.link.inner} {
		if !strings.Contains(out, want) {
			t.Errorf("session output lacks %q:\n%s", want, out)
		}
	}
	// The session runs inside the namespace: the root end of the veth is
	// not one of its interfaces.
	if strings.Contains(out, h.link.outer+":") {
		t.Errorf("session sees the root namespace's %s:\n%s", h.link.outer, out)
	}
}

func TestFaults(t *testing.T) {
	needSSH(t)
	h := New(t)
	// patient is the connect timeout where a timeout is not what the step
	// looks for: a loaded machine may take seconds to finish a handshake,
	// and a refusal or a changed key fails at once anyway.
	const patient = 30
	mustSSH := func(step string) {
		t.Helper()
		if out, err := sshTo(h, patient, "true"); err != nil {
			t.Fatalf("%s: ssh: %v\n%s", step, err, out)
		}
	}
	mustFail := func(step string, connectTimeout int, want string) {
		t.Helper()
		out, err := sshTo(h, connectTimeout, "true")
		if err == nil {
			t.Fatalf("%s: ssh succeeded, want a failure", step)
		}
		if !strings.Contains(out, want) {
			t.Fatalf("%s: ssh failed with %q, want it to mention %q", step, out, want)
		}
	}
	mustSSH("at start")

	h.LinkDown()
	mustFail("link down", 2, "timed out")
	h.LinkUp()
	mustSSH("link up again")

	h.KillSSHD()
	mustFail("sshd killed", patient, "refused")
	h.RestartSSHD()
	mustSSH("sshd restarted")

	h.ChangeHostKey()
	// h.Home's known_hosts still holds the first key.
	mustFail("host key changed", patient, "REMOTE HOST IDENTIFICATION HAS CHANGED")
	fresh := t.TempDir()
	if err := h.AddToHome(fresh); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("ssh", "-F", filepath.Join(fresh, ".ssh", "config"), h.Alias, "true")
	c.Env = append(os.Environ(), "HOME="+fresh, "SSH_AUTH_SOCK=")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("ssh with the new key trusted: %v\n%s", err, out)
	}
}

func TestExecRunsInNamespace(t *testing.T) {
	h := New(t)
	out, err := h.Exec(context.Background(), "ip", "-o", "-4", "addr", "show")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), h.IP+"/30") || strings.Contains(string(out), h.link.outerIP) {
		t.Errorf("Exec ran outside %s:\n%s", h.Name, out)
	}
}

// TestCleanupLeavesNothing starts detached processes through SSH, the way a
// server and its orphaned children are started, and checks that the end of
// the test takes them, the namespace and the veth away.
func TestCleanupLeavesNothing(t *testing.T) {
	needSSH(t)
	var ns, outer string
	var pids []int
	t.Run("host", func(t *testing.T) {
		h := New(t)
		ns, outer = h.Name, h.link.outer
		// A detached server and a grandchild that escaped into its own
		// session: neither is a child of sshd any more.
		out, err := sshTo(h, 10, `setsid sleep 3600 </dev/null >/dev/null 2>&1 & `+
			`(setsid sh -c 'sleep 3600 & sleep 3600' </dev/null >/dev/null 2>&1 &) ; sleep 0.2; echo started`)
		if err != nil {
			t.Fatalf("starting processes: %v\n%s", err, out)
		}
		procs, err := h.Processes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range procs {
			if p.Comm == "sleep" {
				pids = append(pids, p.Pid)
			}
		}
		if len(pids) != 3 {
			t.Fatalf("want 3 sleeps in the host, got %+v", procs)
		}
	})
	if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
		t.Errorf("namespace %s still exists", ns)
	}
	if err := exec.Command("ip", "link", "show", outer).Run(); err == nil {
		t.Errorf("veth %s still exists", outer)
	}
	for _, p := range pids {
		if err := syscall.Kill(p, 0); err == nil && !isZombie(p) {
			t.Errorf("pid %d (%s) outlived its host", p, procCmdline(p))
		}
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// TestSweepRemovesDeadOwnersLeftovers plants a namespace named after a
// process that has exited, with a process inside, and checks that the next
// New removes both.
func TestSweepRemovesDeadOwnersLeftovers(t *testing.T) {
	if reason := unsupported(); reason != "" {
		t.Skip(reason)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ns := namePrefix + strconv.Itoa(dead.Process.Pid) + "-" + randomHex(3)
	if err := ipCmd(context.Background(), "netns", "add", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { (&link{ns: ns}).destroy(context.Background()) })
	sleeper := exec.Command("ip", "netns", "exec", ns, "sleep", "3600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { sleeper.Wait(); close(waited) }()
	// The test started the sleeper, so it stops it whatever the sweep does.
	t.Cleanup(func() { _ = sleeper.Process.Kill() })
	// `ip netns exec` enters the namespace a moment after it starts. A sweep
	// that ran before then would find the namespace empty and the sleeper
	// would join it after its removal, so wait until the kernel shows it in.
	waitInNamespace(t, ns, sleeper.Process.Pid)

	New(t)

	if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
		t.Errorf("leftover namespace %s survived the sweep", ns)
	}
	select {
	case <-waited:
	case <-time.After(killWait):
		t.Errorf("process %d in the leftover namespace survived the sweep", sleeper.Process.Pid)
	}
}

// waitInNamespace waits until pid is listed inside ns and runs sleep.
func waitInNamespace(t *testing.T, ns string, pid int) {
	t.Helper()
	deadline := time.Now().Add(killWait)
	for time.Now().Before(deadline) {
		pids, err := nsPids(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pids {
			if p == pid && procComm(pid) == "sleep" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid %d never showed up running sleep inside %s", pid, ns)
}
