package sshdtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServerWithOpenSSHClient checks the server with the real ssh client,
// through the generated config, known_hosts and key, with strict host key
// checking, and that Restart keeps the same identity.
func TestServerWithOpenSSHClient(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("sshdtest: the ssh client is not installed")
	}
	s := StartWith(t, Options{Path: "/opt/fake-bin:/usr/bin:/bin"})
	run := func() (string, error) {
		cmd := exec.Command("ssh", "-F", s.ConfigFile, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
			"-o", "UserKnownHostsFile="+s.KnownHostsFile, s.Alias, "echo ok $PATH")
		cmd.Env = append(os.Environ(), "HOME="+s.Home, "SSH_AUTH_SOCK=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err != nil || !strings.Contains(out, "ok /opt/fake-bin:") {
		t.Fatalf("ssh %s: %v: %s\nsshd: %s", s.Alias, err, out, s.Stderr())
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err != nil {
		t.Fatalf("after Restart: %v: %s", err, out)
	}
	s.Kill()
	if _, err := run(); err == nil {
		t.Fatal("ssh succeeded after Kill")
	}
}
