package campaign

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// withHost replaces goodFiles' host block with block (YAML at the top level).
func withHost(block string) memFiles {
	return goodFiles.with(memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "host:\n  ssh: gpu\n", block, 1)})
}

func TestLoadHostsErrors(t *testing.T) {
	tests := []struct {
		name, block string
		want        []string
	}{
		{"not a list", "hosts: gpu-a\n",
			[]string{`c/configs/camp.yaml:2:8: hosts: want a list of SSH hosts (aliases or user@host:port), got "gpu-a"`}},
		{"empty", "hosts: []\n",
			[]string{`c/configs/camp.yaml:2:8: hosts: empty list (at least one SSH host)`}},
		{"duplicate", "hosts: [gpu-a, gpu-b, gpu-a]\n",
			[]string{`c/configs/camp.yaml:2:23: hosts[2]: "gpu-a" repeated (first at line 2)`}},
		{"local in the fleet", "hosts: [gpu-a, local]\n",
			[]string{`c/configs/camp.yaml:2:16: hosts[1]: local cannot be part of a fleet (its servers would share this machine with the campaign); use host: local alone`}},
		{"bad port", "hosts: [gpu-a, \"me@gpu-b:99999\"]\n",
			[]string{`c/configs/camp.yaml:2:16: hosts[1]: "me@gpu-b:99999": port "99999" is not 1-65535`}},
		{"not a word", "hosts: [gpu-a, {ssh: gpu-b}]\n",
			[]string{`c/configs/camp.yaml:2:16: hosts[1]: want a string, got a mapping`}},
		{"host local beside hosts", "host: local\nhosts: [gpu-a, gpu-b]\n",
			[]string{`c/configs/camp.yaml:2:7: host: local cannot be combined with hosts: (a fleet is of SSH hosts; give its shared settings as host: {workdir: ...})`}},
		{"host.ssh not in hosts", "host: {ssh: gpu-z, workdir: /w}\nhosts: [gpu-a, gpu-b]\n",
			[]string{`c/configs/camp.yaml:2:13: host.ssh: "gpu-z" is not among hosts: (gpu-a, gpu-b); with hosts:, host: gives only the settings the fleet shares`}},
		{"neither", "",
			[]string{`c/configs/camp.yaml:1:1: host: missing (` + "`local`" + `, or a mapping with ssh:)`}},
		{"bad link patience", "host: {ssh: gpu, link_patience: 0s}\n",
			[]string{`c/configs/camp.yaml:2:33: host.link_patience: must be longer than 0, got 0s`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, withHost(tt.block))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLoadHosts(t *testing.T) {
	tests := []struct {
		name, block string
		want        []Host
	}{
		{"single host", "host:\n  ssh: gpu\n", nil},
		{"fleet with defaults", "hosts: [gpu-a, \"me@gpu-b:2222\"]\n", []Host{
			{SSH: "gpu-a", Workdir: DefaultSSHWorkdir, Python: DefaultPython, SweepMode: DefaultSweepMode, LinkPatience: DefaultLinkPatience},
			{SSH: "me@gpu-b:2222", Workdir: DefaultSSHWorkdir, Python: DefaultPython, SweepMode: DefaultSweepMode, LinkPatience: DefaultLinkPatience},
		}},
		{"shared settings from host", "host: {workdir: /w, python: py, accept_new: true, sweep_mode: tunnel, link_patience: 1m}\nhosts: [a, b]\n", []Host{
			{SSH: "a", Workdir: "/w", Python: "py", AcceptNew: true, SweepMode: SweepOverSSH, LinkPatience: time.Minute},
			{SSH: "b", Workdir: "/w", Python: "py", AcceptNew: true, SweepMode: SweepOverSSH, LinkPatience: time.Minute},
		}},
		{"host.ssh among hosts", "host: {ssh: b}\nhosts: [a, b]\n", []Host{
			{SSH: "a", Workdir: DefaultSSHWorkdir, Python: DefaultPython, SweepMode: DefaultSweepMode, LinkPatience: DefaultLinkPatience},
			{SSH: "b", Workdir: DefaultSSHWorkdir, Python: DefaultPython, SweepMode: DefaultSweepMode, LinkPatience: DefaultLinkPatience},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := loadMem(t, withHost(tt.block))
			if errs != nil {
				t.Fatalf("errors: %q", errs)
			}
			if !reflect.DeepEqual(c.Hosts, tt.want) {
				t.Errorf("Hosts:\n got %+v\nwant %+v", c.Hosts, tt.want)
			}
			if tt.want != nil && !reflect.DeepEqual(c.Host, tt.want[0]) {
				t.Errorf("Host = %+v, want the fleet's first, %+v", c.Host, tt.want[0])
			}
		})
	}
}
