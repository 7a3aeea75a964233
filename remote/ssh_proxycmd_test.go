package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSSHProxyCommand reaches a target through a ProxyCommand from the ssh
// config, with its tokens expanded, and checks that the command lives as
// long as the connection and no longer.
func TestSSHProxyCommand(t *testing.T) {
	e := newSSHEnv(t)
	_, pub, _ := clientKey(t, e.sshDir, "id_target")
	target := startTestSSHServer(t, nil, pub)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "netcat.pid")
	e.writeConfig(t, fmt.Sprintf(`Host gpu-box
  HostName 127.0.0.1
  Port %d
  User me
  IdentityFile ~/.ssh/id_target
  ProxyCommand env %s=%s %s -test.run=none %%h:%%p
Match exec "false"
  User never
Host refused
  HostName 127.0.0.1
  Port %d
  IdentityFile ~/.ssh/id_target
  ProxyCommand sh -c 'echo "bastion says no to %%r@%%n" >&2; exit 3'
`, target.Port, netcatEnv, pidFile, self, target.Port))
	e.addKnown(t, target.Port, target.HostKeys[0].PublicKey())

	h, err := dial(t, e.opts("gpu-box"))
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := h.Run(testCtx(t), "echo proxied"); err != nil || string(out) != "proxied\n" {
		t.Fatalf("Run through a ProxyCommand = %q, %v", out, err)
	}
	if notes := h.ConfigNotes(); len(notes) != 1 || !strings.Contains(notes[0], "config:7: Match exec is not evaluated") {
		t.Errorf("ConfigNotes = %q; want the Match exec block at line 7", notes)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if !pidAlive(pid) {
		t.Fatalf("the ProxyCommand (pid %d) is gone while its connection is open", pid)
	}
	// A Ctrl-C at the terminal reaches bakeoff's process group, not the link.
	if pg, err := syscall.Getpgid(pid); err != nil || pg == syscall.Getpgrp() {
		t.Errorf("the ProxyCommand runs in process group %d (%v), bakeoff's own", pg, err)
	}
	// A lost link reconnects through a new ProxyCommand; the old one goes.
	h.Drop()
	if out, _, err := h.Run(testCtx(t), "echo again"); err != nil || string(out) != "again\n" {
		t.Fatalf("Run after a reconnect through a ProxyCommand = %q, %v", out, err)
	}
	waitProxyGone(t, pid)
	b, _ = os.ReadFile(pidFile)
	pid2, _ := strconv.Atoi(string(b))
	if pid2 == pid || !pidAlive(pid2) {
		t.Fatalf("after the reconnect the ProxyCommand is pid %d (was %d)", pid2, pid)
	}
	h.Close()
	waitProxyGone(t, pid2)

	_, err = dial(t, e.opts("refused"))
	if err == nil {
		t.Fatal("DialSSH through a failing ProxyCommand succeeded")
	}
	for _, want := range []string{"refused", "ProxyCommand", "bastion says no to ", "@refused", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestProxyCommandTokens(t *testing.T) {
	h := hop{Host: "10.0.0.7", Port: 2222, User: "me"}
	got := proxyCommandTokens("ssh -W %h:%p -l %r bastion # %n 100%%", h, "gpu-box")
	if want := "ssh -W 10.0.0.7:2222 -l me bastion # gpu-box 100%"; got != want {
		t.Errorf("proxyCommandTokens = %q; want %q", got, want)
	}
}

// waitProxyGone fails unless pid (a ProxyCommand) exits within a few seconds.
func waitProxyGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err == nil && pidAlive(pid) {
		t.Errorf("the ProxyCommand (pid %d) outlived its connection", pid)
	}
}
