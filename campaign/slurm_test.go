package campaign

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// slurmCampaign is goodFiles' campaign with host replaced by hostBlock.
func slurmCampaign(hostBlock string) memFiles {
	return goodFiles.with(memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "host:\n  ssh: gpu\n", hostBlock, 1)})
}

func TestLoadSlurm(t *testing.T) {
	c, errs := loadMem(t, slurmCampaign(`host:
  slurm: {login: "me@login1:2222", partition: gpu, gres: "gpu:8", time: "12:00:00", nodes: 2, account: lab}
  workdir: /scratch/bakeoff
`))
	if errs != nil {
		t.Fatal(errs)
	}
	want := &SlurmSpec{Login: "me@login1:2222", Partition: "gpu", Account: "lab", Gres: "gpu:8", Nodes: 2,
		Time: 12 * time.Hour, TimeText: "12:00:00", Margin: DefaultSlurmMargin}
	if !reflect.DeepEqual(c.Host.Slurm, want) {
		t.Errorf("Slurm = %+v, want %+v", c.Host.Slurm, want)
	}
	if c.Host.Workdir != "/scratch/bakeoff" || c.Host.Local || c.Host.SSH != "" {
		t.Errorf("host = %+v", c.Host)
	}

	c, errs = loadMem(t, slurmCampaign("host:\n  slurm: {login: login1, time: \"1-00\", margin: 10m}\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if s := c.Host.Slurm; s.Nodes != 1 || s.Time != 24*time.Hour || s.Margin != 10*time.Minute || c.Host.Workdir != DefaultSSHWorkdir {
		t.Errorf("defaults: %+v, workdir %s", s, c.Host.Workdir)
	}
}

func TestLoadSlurmErrors(t *testing.T) {
	tests := []struct {
		name, host string
		want       []string
	}{
		{"missing login and time", "host:\n  slurm: {partition: gpu}\n", []string{
			`c/configs/camp.yaml:3:10: host.slurm.login: missing (the cluster's login node: an alias from ~/.ssh/config or user@host:port)`,
			`c/configs/camp.yaml:3:10: host.slurm.time: missing (the allocation's time limit, e.g. "12:00:00"; bakeoff starts no round that would outlast it)`,
		}},
		{"bad time", "host:\n  slurm: {login: l, time: 12h}\n", []string{
			`c/configs/camp.yaml:3:27: host.slurm.time: "12h" is not a Slurm time (minutes, minutes:seconds, hours:minutes:seconds or days-hours[:minutes[:seconds]])`,
		}},
		{"time under a minute", "host:\n  slurm: {login: l, time: \"0:30\"}\n", []string{
			`c/configs/camp.yaml:3:27: host.slurm.time: "0:30": Slurm's limits are whole minutes; want at least 1`,
		}},
		{"nodes below one", "host:\n  slurm: {login: l, time: 60, nodes: 0}\n", []string{
			`c/configs/camp.yaml:3:38: host.slurm.nodes: must be at least 1, got 0`,
		}},
		{"margin eats the time", "host:\n  slurm: {login: l, time: 10, margin: 10m}\n", []string{
			`c/configs/camp.yaml:3:39: host.slurm.margin: 10m0s leaves nothing of host.slurm.time 10`,
		}},
		{"both ssh and slurm", "host:\n  ssh: gpu\n  slurm: {login: l, time: 10}\n", []string{
			`c/configs/camp.yaml:3:8: host.ssh: give either host.ssh (one machine) or host.slurm (a cluster's allocation), not both`,
		}},
		{"unknown key", "host:\n  slurm: {login: l, time: 10, qos: high}\n", []string{
			`c/configs/camp.yaml:3:31: host.slurm: unknown key "qos" (known: account, gres, login, margin, nodes, partition, time)`,
		}},
		{"option injection", "host:\n  slurm: {login: -oProxyCommand=x, time: 10, partition: \"a b\", gres: --x}\n", []string{
			`c/configs/camp.yaml:3:18: host.slurm.login: "-oProxyCommand=x" starts with '-'`,
			`c/configs/camp.yaml:3:57: host.slurm.partition: "a b": want one word (no spaces, quotes or leading '-')`,
			`c/configs/camp.yaml:3:70: host.slurm.gres: "--x": want one word (no spaces, quotes or leading '-')`,
		}},
		{"not a mapping", "host:\n  slurm: login1\n", []string{
			`c/configs/camp.yaml:3:10: host.slurm: want a mapping, got "login1"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := loadMem(t, slurmCampaign(tt.host))
			if !reflect.DeepEqual(errs, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSlurmGresWithoutGPU: a campaign that uses no GPU but asks Slurm for
// GPUs on every node is warned, at the gres, naming gpu: none's line; other
// resources, or no gres, are not.
func TestSlurmGresWithoutGPU(t *testing.T) {
	for _, tt := range []struct {
		name, host string
		want       []string
	}{
		{"gpus asked for", "host:\n  slurm: {login: l, time: 60, gres: \"gpu:8\"}\ngpu: none\n", []string{
			`c/configs/camp.yaml:3:37: host.slurm.gres: "gpu:8" asks every node for GPUs, and gpu: none (line 4) says the campaign uses none: they would sit idle for the whole allocation`,
		}},
		{"a typed gpu among others", "host:\n  slurm: {login: l, time: 60, gres: \"tmpdisk:100,gpu:a100:2\"}\ngpu: none\n", []string{
			`c/configs/camp.yaml:3:37: host.slurm.gres: "tmpdisk:100,gpu:a100:2" asks every node for GPUs, and gpu: none (line 4) says the campaign uses none: they would sit idle for the whole allocation`,
		}},
		{"no gpu in the gres", "host:\n  slurm: {login: l, time: 60, gres: \"tmpdisk:100\"}\ngpu: none\n", nil},
		{"no gres", "host:\n  slurm: {login: l, time: 60}\ngpu: none\n", nil},
		{"gpus used", "host:\n  slurm: {login: l, time: 60, gres: \"gpu:8\"}\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := loadMem(t, slurmCampaign(tt.host))
			if errs != nil {
				t.Fatal(errs)
			}
			if !reflect.DeepEqual(c.Warnings, tt.want) {
				t.Errorf("warnings:\n got: %q\nwant: %q", c.Warnings, tt.want)
			}
		})
	}
}
