package sim

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		env   map[string]string
		check func(t *testing.T, c *Config)
	}{
		{"defaults", "", nil, func(t *testing.T, c *Config) {
			if c.Host != "127.0.0.1" || c.Port != 30000 || c.TP != 1 || c.Speculative() || c.Sim.GPUs != 1 {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{"seed baseline", baselineArgs, nil, func(t *testing.T, c *Config) {
			if c.TP != 8 || c.CudaGraphMaxBS != 128 || c.MaxRunningRequests != 256 || !c.AllreduceFusion ||
				!c.DisableCustomAR || c.AttentionBackend != "flashinfer" || c.Sim.GPUs != 8 {
				t.Errorf("baseline: %+v", c)
			}
		}},
		{"equals form and alias", "--tensor-parallel-size=4 --port=31001 --mem-fraction-static=0.8 --served-model-name=kimi", nil, func(t *testing.T, c *Config) {
			if c.TP != 4 || c.Port != 31001 || c.MemFractionStatic != 0.8 || c.ModelName() != "kimi" {
				t.Errorf("got %+v", c)
			}
		}},
		{"topk1 forces steps+1 draft tokens", topk1Args + " --speculative-num-draft-tokens=16", nil, func(t *testing.T, c *Config) {
			if c.DraftTokens() != 4 {
				t.Errorf("draft tokens %d, want 4", c.DraftTokens())
			}
		}},
		{"spec v2 from env", topk1Args, map[string]string{SpecV2Env: "1"}, func(t *testing.T, c *Config) {
			if !c.SpecV2 {
				t.Error("SGLANG_ENABLE_SPEC_V2=1 not seen")
			}
		}},
		{"sim knobs", "--sim-speed 50 --sim-load-time 2s --sim-seed 7 --sim-slowdown 1.05 --sim-noise 0 --sim-gpus 4 --sim-state /x --sim-fault crash-after=3 --sim-fault hold-memory=2s", nil, func(t *testing.T, c *Config) {
			s := c.Sim
			if s.Speed != 50 || s.LoadTime != 2*time.Second || s.Seed != 7 || !s.SeedSet || s.Slowdown != 1.05 ||
				s.Noise != 0 || s.GPUs != 4 || s.StateDir != "/x" || s.Faults.CrashAfter != 3 || s.Faults.HoldMemory != 2*time.Second {
				t.Errorf("sim options %+v", s)
			}
			if _, ok := c.Given["sim-speed"]; ok {
				t.Error("sim knobs must not appear in the server args")
			}
		}},
		{"launch noise", "--sim-launch-sigma 0.01 --sim-drift=0.02 --sim-drift-tau 2m", nil, func(t *testing.T, c *Config) {
			want := LaunchNoise{Sigma: 0.01, Drift: 0.02, Tau: 2 * time.Minute}
			if got := c.Sim.LaunchNoise(); got != want {
				t.Errorf("launch noise %+v, want %+v", got, want)
			}
		}},
		{"no launch noise by default", "", nil, func(t *testing.T, c *Config) {
			if n := c.Sim.LaunchNoise(); !n.Zero() || n.TauOrDefault() != DefaultDriftTau || c.Sim.HostDrift {
				t.Errorf("launch noise %+v, host drift %v", n, c.Sim.HostDrift)
			}
		}},
		{"host drift", "--sim-drift 0.02 --sim-drift-scope host", nil, func(t *testing.T, c *Config) {
			if !c.Sim.HostDrift || c.Sim.Drift != 0.02 {
				t.Errorf("host drift %v, drift %v", c.Sim.HostDrift, c.Sim.Drift)
			}
		}},
		{"seed mixed with the launch", "--sim-seed 7", map[string]string{LaunchEnv: "3", RoundEnv: "2"}, func(t *testing.T, c *Config) {
			if c.Sim.Seed == 7 || !c.Sim.SeedSet || c.Sim.SeedMix != "BAKEOFF_LAUNCH=3 BAKEOFF_ROUND=2" {
				t.Errorf("seed %d, mix %q", c.Sim.Seed, c.Sim.SeedMix)
			}
		}},
		{"seed alone without a launch", "--sim-seed 7", nil, func(t *testing.T, c *Config) {
			if c.Sim.Seed != 7 || c.Sim.SeedMix != "" {
				t.Errorf("seed %d, mix %q", c.Sim.Seed, c.Sim.SeedMix)
			}
		}},
		{"state dir from env", "", map[string]string{SimStateEnv: "/tmp/state-x"}, func(t *testing.T, c *Config) {
			if c.Sim.StateDir != "/tmp/state-x" {
				t.Errorf("state dir %q", c.Sim.StateDir)
			}
		}},
		{"no prefix cache by default", "", nil, func(t *testing.T, c *Config) {
			if c.CacheOn() || c.TotalTokens() != kvCacheTokens || c.CachePage() != DefaultCachePage || c.EnableCacheReport {
				t.Errorf("cache on %v, pool %d, page %d, report %v", c.CacheOn(), c.TotalTokens(), c.CachePage(), c.EnableCacheReport)
			}
		}},
		{"prefix cache", "--sim-prefix-cache --max-total-tokens 5000 --page-size 1 --enable-cache-report", nil, func(t *testing.T, c *Config) {
			if !c.CacheOn() || c.TotalTokens() != 5000 || c.CachePage() != 1 || !c.EnableCacheReport {
				t.Errorf("cache on %v, pool %d, page %d, report %v", c.CacheOn(), c.TotalTokens(), c.CachePage(), c.EnableCacheReport)
			}
		}},
		{"disable-radix-cache wins", "--sim-prefix-cache --disable-radix-cache", nil, func(t *testing.T, c *Config) {
			if c.CacheOn() {
				t.Error("the cache runs despite --disable-radix-cache")
			}
		}},
		{"accepted-only flags", "--trust-remote-code --dtype auto --log-level warning --context-length 8192 --chunked-prefill-size 4096", nil, func(t *testing.T, c *Config) {
			if c.Given["trust-remote-code"] != "true" || c.ContextLength != 8192 || c.ChunkedPrefillSize != 4096 || c.LogLevel != "warning" {
				t.Errorf("got %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseArgs(strings.Fields(tt.args), func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{"--foo", "unrecognized arguments: --foo"},
		{"--port 1 --foo bar --tp 2", "unrecognized arguments: --foo bar"},
		{"--port", "argument --port: expected one argument"},
		{"--port abc", "argument --port: invalid int value: 'abc'"},
		{"--stream-interval 0", "argument --stream-interval: invalid positive int value: '0'"},
		{"--page-size 0", "argument --page-size: invalid positive int value: '0'"},
		{"--max-total-tokens x", "argument --max-total-tokens: invalid positive int value: 'x'"},
		{"--sim-prefix-cache=1", "argument --sim-prefix-cache: ignored explicit argument '1'"},
		{"--enable-metrics=yes", "argument --enable-metrics: ignored explicit argument 'yes'"},
		{"--speculative-algorithm MEDUSA", "argument --speculative-algorithm: invalid choice: 'MEDUSA'"},
		{"--sim-fault explode", `unknown fault "explode"`},
		{"--sim-fault crash-after", "needs a value"},
		{"--sim-speed 0", "invalid positive float value"},
		{"--sim-launch-sigma -0.01", "argument --sim-launch-sigma: invalid non-negative float value: '-0.01'"},
		{"--sim-drift x", "argument --sim-drift: invalid non-negative float value: 'x'"},
		{"--sim-drift-tau 0s", "argument --sim-drift-tau: invalid positive duration value: '0s'"},
		{"--sim-drift-scope room", "argument --sim-drift-scope: invalid choice: 'room' (choose from 'launch', 'host')"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := ParseArgs(strings.Fields(tt.args), noEnv)
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *ArgError", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "usage: launch_server.py") {
				t.Errorf("error:\n%s\nwant it to contain %q after a usage line", err, tt.want)
			}
		})
	}
}

// TestUnknownFlagProcess checks the whole command: stderr and exit status 2.
func TestUnknownFlagProcess(t *testing.T) {
	cmd := exec.Command(simBinary, "sim", "--tp", "8", "--cuda-graph-max-bz", "128")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2", err)
	}
	if !strings.Contains(string(out), "launch_server.py: error: unrecognized arguments: --cuda-graph-max-bz 128") {
		t.Errorf("stderr:\n%s", out)
	}
}

func TestRunningCap(t *testing.T) {
	tests := []struct {
		args      string
		want      int
		wantReset bool
	}{
		{"--tp 8", DefaultMaxRunningRequests, false},
		{"--speculative-algorithm EAGLE3", 48, true},
		{"--speculative-algorithm EAGLE3 --max-running-requests 256", 256, false},
		{"--max-running-requests 64", 64, false},
	}
	for _, tt := range tests {
		c, err := ParseArgs(strings.Fields(tt.args), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if n, reset := c.RunningCap(); n != tt.want || reset != tt.wantReset {
			t.Errorf("%s: cap %d reset %v, want %d %v", tt.args, n, reset, tt.want, tt.wantReset)
		}
	}
}
