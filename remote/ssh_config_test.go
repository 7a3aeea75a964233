package remote

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitTarget(t *testing.T) {
	tests := []struct {
		in         string
		user, host string
		port       int
		wantErr    bool
	}{
		{"gpu-box", "", "gpu-box", 0, false},
		{"me@gpu-box", "", "gpu-box", 0, false},
		{"me@10.0.0.5:2222", "me", "10.0.0.5", 2222, false},
		{"[::1]:22", "", "::1", 22, false},
		{"a@b@host", "a@b", "host", 0, false},
		{"host:0", "", "", 0, true},
		{"host:http", "", "", 0, true},
		{"me@", "", "", 0, true},
	}
	for _, tt := range tests {
		user, host, port, err := splitTarget(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("splitTarget(%q) error = %v", tt.in, err)
			continue
		}
		if tt.wantErr {
			continue
		}
		if tt.in == "me@gpu-box" {
			tt.user = "me"
		}
		if user != tt.user || host != tt.host || port != tt.port {
			t.Errorf("splitTarget(%q) = %q, %q, %d", tt.in, user, host, port)
		}
	}
}

func TestSSHConfigChain(t *testing.T) {
	home := t.TempDir()
	cfgFile := filepath.Join(home, "config")
	os.WriteFile(cfgFile, []byte(`
Host bastion
  HostName bastion.example.com
  User ops
Host inner
  HostName 10.1.0.1
  Port 2200
  ProxyJump bastion
Host gpu-box
  HostName 10.1.0.9
  User me
  IdentityFile ~/.ssh/gpu_key
  IdentityFile "%d/keys/%r@%h"
  UserKnownHostsFile ~/.ssh/known_gpu
  ProxyJump inner,root@10.1.0.2:2222
Host loop1
  ProxyJump loop2
Host loop2
  ProxyJump loop1
Host direct
  HostName 192.0.2.1
  ProxyJump none
Host bastion
  ProxyCommand ssh -W %h:%p jump.example.com
Host viacmd
  HostName 10.1.0.5
  ProxyCommand cloudflared access ssh --hostname %n --port %p
Host viaboth
  ProxyJump bastion
  ProxyCommand nc %h %p
Host *
  User fallback
`), 0o600)
	c, err := loadSSHConfig(cfgFile, home, "local")
	if err != nil {
		t.Fatal(err)
	}
	hops, err := c.chain("gpu-box", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hops {
		got = append(got, h.User+"@"+h.Addr())
	}
	want := []string{"ops@bastion.example.com:22", "fallback@10.1.0.1:2200", "root@10.1.0.2:2222", "me@10.1.0.9:22"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chain(gpu-box) = %v; want %v", got, want)
	}
	last := hops[len(hops)-1]
	if wantIDs := []string{home + "/.ssh/gpu_key", home + "/keys/me@10.1.0.9"}; !reflect.DeepEqual(last.Identities, wantIDs) {
		t.Errorf("identities = %v; want %v", last.Identities, wantIDs)
	}
	if !reflect.DeepEqual(last.KnownHosts, []string{home + "/.ssh/known_gpu"}) {
		t.Errorf("known hosts = %v", last.KnownHosts)
	}
	if _, err := c.chain("loop1", 0); err == nil || !strings.Contains(err.Error(), "loop") {
		t.Errorf("chain(loop1) = %v; want a loop error", err)
	}
	hops, err = c.chain("other@direct:2022", 0)
	if err != nil || len(hops) != 1 || hops[0].User != "other" || hops[0].Addr() != "192.0.2.1:2022" {
		t.Errorf("chain(other@direct:2022) = %+v, %v", hops, err)
	}
	// ProxyCommand reaches the first hop only, tokens expanded; ProxyJump
	// wins over it.
	if hops[0].ProxyCommand != "" {
		t.Errorf("direct has a ProxyCommand %q", hops[0].ProxyCommand)
	}
	hops, err = c.chain("viacmd", 0)
	if err != nil || len(hops) != 1 || hops[0].ProxyCommand != "cloudflared access ssh --hostname viacmd --port 22" {
		t.Errorf("chain(viacmd) = %+v, %v", hops, err)
	}
	hops, err = c.chain("viaboth", 0)
	if err != nil || len(hops) != 2 || hops[0].ProxyCommand != "ssh -W bastion.example.com:22 jump.example.com" || hops[1].ProxyCommand != "" {
		t.Errorf("chain(viaboth) = %+v, %v", hops, err)
	}
	// No config file at all: the target is taken as written.
	c, _ = loadSSHConfig(filepath.Join(home, "missing"), home, "local")
	hops, err = c.chain("10.0.0.1", 0)
	if err != nil || len(hops) != 1 || hops[0].User != "local" || hops[0].Addr() != "10.0.0.1:22" {
		t.Errorf("chain without a config = %+v, %v", hops, err)
	}
}
