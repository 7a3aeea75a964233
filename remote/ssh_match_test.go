package remote

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestSSHConfigMatch: Match blocks the config reader alone refuses (user,
// exec, several criteria) are evaluated per target, Includes are read with
// them, and a block that cannot be evaluated is named instead of breaking
// the whole file.
func TestSSHConfigMatch(t *testing.T) {
	home := t.TempDir()
	sshDir := filepath.Join(home, ".ssh")
	os.MkdirAll(filepath.Join(sshDir, "conf.d"), 0o700)
	os.WriteFile(filepath.Join(sshDir, "conf.d", "a.conf"), []byte(`Host inc-box
  HostName 10.0.0.20
Match originalhost inc-box
  Port 2201
`), 0o600)
	cfgFile := filepath.Join(sshDir, "config")
	os.WriteFile(cfgFile, []byte(`Include conf.d/*.conf   # the fleet
Host gpu-box
  HostName 10.0.0.9
Match host 10.0.0.* user root
  IdentityFile ~/.ssh/root_key
Match originalhost gpu-box !user root
  IdentityFile ~/.ssh/other_key
Match exec "test -f /etc/corp" host *.corp
  User execuser
MATCH localuser local,!nobody
  Port 2200
Match canonical
  Port 1
Match !tagged prod final
  ServerAliveInterval 5
Host *
  User fallback
`), 0o600)
	c, err := loadSSHConfig(cfgFile, home, "local")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target     string
		user, addr string
		ids        []string
	}{
		{"root@gpu-box", "root", "10.0.0.9:2200", []string{home + "/.ssh/root_key"}},
		{"gpu-box", "fallback", "10.0.0.9:2200", []string{home + "/.ssh/other_key"}},
		{"inc-box", "fallback", "10.0.0.20:2201", nil},
		{"x.corp", "fallback", "x.corp:2200", nil},
	}
	for _, tt := range tests {
		h, err := c.resolve(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		if h.User != tt.user || h.Addr() != tt.addr || !reflect.DeepEqual(h.Identities, tt.ids) {
			t.Errorf("resolve(%s) = %s@%s %v; want %s@%s %v", tt.target, h.User, h.Addr(), h.Identities, tt.user, tt.addr, tt.ids)
		}
	}
	if got := c.view("gpu-box", "").get("ServerAliveInterval"); got != "5" {
		t.Errorf("Match !tagged prod final: ServerAliveInterval = %q; want 5", got)
	}
	want := []string{cfgFile + ":8: Match exec is not evaluated by bakeoff; its block is not applied"}
	if !reflect.DeepEqual(c.notes, want) {
		t.Errorf("notes = %q; want %q", c.notes, want)
	}

	// A connection that fails says which Match blocks were skipped.
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	_, err = DialSSH(testCtx(t), SSHOptions{Target: "127.0.0.1:1", ConfigFile: cfgFile, Getenv: getenv, ConnectTimeout: 5 * time.Second, KeepaliveInterval: -1, ReconnectAttempts: 1})
	if err == nil || !strings.Contains(err.Error(), want[0]) {
		t.Errorf("DialSSH to a closed port = %v; want the skipped Match block named", err)
	}
	t.Log(err)
}

func TestSSHConfigIncludeLoop(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	cfgFile := filepath.Join(home, ".ssh", "config")
	os.WriteFile(cfgFile, []byte("Include config\n"), 0o600)
	_, err := loadSSHConfig(cfgFile, home, "local")
	if err == nil || !strings.Contains(err.Error(), "nested more than") || !strings.Contains(err.Error(), cfgFile+":1") {
		t.Fatalf("loadSSHConfig of a self-including file = %v; want a nesting error naming %s:1", err, cfgFile)
	}
}

func TestMatchPatternList(t *testing.T) {
	tests := []struct {
		list, s string
		want    bool
	}{
		{"*.corp", "a.corp", true},
		{"*.corp", "a.org", false},
		{"10.0.0.?,gpu-*", "gpu-1", true},
		{"*,!bastion", "bastion", false},
		{"*,!bastion", "GPU", true},
		{"!bastion", "gpu", false},
		{"GPU-BOX", "gpu-box", true},
		{"[gpu-*]:2222", "[gpu-7]:2222", true},
		{"[gpu-*]:2222", "[gpu-7]:22", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
	}
	for _, tt := range tests {
		if got := matchPatternList(tt.list, tt.s); got != tt.want {
			t.Errorf("matchPatternList(%q, %q) = %v; want %v", tt.list, tt.s, got, tt.want)
		}
	}
}

func TestConfigWords(t *testing.T) {
	got := configWords(`exec "test -f /x"  host  a,b`)
	if want := []string{"exec", "test -f /x", "host", "a,b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("configWords = %q; want %q", got, want)
	}
}
