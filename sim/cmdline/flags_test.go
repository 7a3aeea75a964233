package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

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
		{"seed baseline", simtest.Baseline, nil, func(t *testing.T, c *Config) {
			if c.TP != 8 || c.CudaGraphMaxBS != 128 || c.MaxRunningRequests != 256 || c.AllreduceFusion() ||
				!c.DisableCustomAR || c.AttentionBackend != "flashinfer" || c.Sim.GPUs != 8 || c.Sim.ComputeCap != "12.0" {
				t.Errorf("baseline: %+v", c)
			}
			if c.Given["tp_size"] != "8" || c.Given["cuda_graph_max_bs_decode"] != "128" {
				t.Errorf("given under their dests: %v", c.Given)
			}
		}},
		{"fusion on by itself at tp 8 on SM100", simtest.Baseline, map[string]string{gpu.SimComputeCapEnv: "10.0"}, func(t *testing.T, c *Config) {
			if !c.AllreduceFusion() || c.EffectiveFusionBackend() != "auto" || c.FusionRefused() {
				t.Errorf("fusion %v, backend %v, refused %v", c.AllreduceFusion(), c.EffectiveFusionBackend(), c.FusionRefused())
			}
		}},
		{"enforce-disable keeps fusion off", simtest.Baseline + " --enforce-disable-flashinfer-allreduce-fusion --flashinfer-allreduce-fusion-backend trtllm", map[string]string{gpu.SimComputeCapEnv: "9.0"}, func(t *testing.T, c *Config) {
			if c.AllreduceFusion() || c.FusionRefused() {
				t.Errorf("fusion %v, refused %v", c.AllreduceFusion(), c.FusionRefused())
			}
		}},
		{"fusion asked for on SM120 is refused", simtest.Baseline + " --flashinfer-allreduce-fusion-backend=auto", nil, func(t *testing.T, c *Config) {
			if c.AllreduceFusion() || !c.FusionRefused() {
				t.Errorf("fusion %v, refused %v", c.AllreduceFusion(), c.FusionRefused())
			}
		}},
		{"deprecated fusion flag is backend auto", simtest.Baseline + " --enable-flashinfer-allreduce-fusion", map[string]string{gpu.SimComputeCapEnv: "9.0"}, func(t *testing.T, c *Config) {
			want := []string{"--enable-flashinfer-allreduce-fusion is deprecated. Please use --flashinfer-allreduce-fusion-backend=auto instead."}
			if c.FusionBackend != "auto" || !c.AllreduceFusion() || !slices.Equal(c.Notices, want) {
				t.Errorf("backend %q, notices %q", c.FusionBackend, c.Notices)
			}
		}},
		{"deprecated fusion flag beside a backend says nothing", "--enable-flashinfer-allreduce-fusion --flashinfer-allreduce-fusion-backend mnnvl", nil, func(t *testing.T, c *Config) {
			if c.FusionBackend != "mnnvl" || len(c.Notices) != 0 {
				t.Errorf("backend %q, notices %q", c.FusionBackend, c.Notices)
			}
		}},
		{"deprecated aliases warn as SGLang's parser does", "--cuda-graph-max-bs 64 --disable-cuda-graph --cuda-graph-bs 1 2 4", nil, func(t *testing.T, c *Config) {
			want := []string{
				"\x1b[1;33m'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-max-bs-decode' instead.\x1b[0m",
				"\x1b[1;33m'--disable-cuda-graph' is deprecated and will be removed in a future release. Use '--cuda-graph-backend-{decode,prefill}=disabled' instead.\x1b[0m",
				"\x1b[1;33m'--cuda-graph-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-bs-decode' instead.\x1b[0m",
			}
			if !slices.Equal(c.ParseWarnings, want) {
				t.Errorf("warnings:\n%q\nwant\n%q", c.ParseWarnings, want)
			}
			if c.CudaGraphMaxBS != 64 || c.DecodeGraphMaxBS() != 0 || c.Given["cuda_graph_max_bs_decode"] != "64" || c.Given["cuda_graph_bs_decode"] != "1 2 4" {
				t.Errorf("max bs %d, graph %d, given %v", c.CudaGraphMaxBS, c.DecodeGraphMaxBS(), c.Given)
			}
		}},
		{"decode graph off", "--cuda-graph-backend-decode disabled", nil, func(t *testing.T, c *Config) {
			if c.DecodeGraphMaxBS() != 0 || len(c.ParseWarnings) != 0 {
				t.Errorf("graph max bs %d, warnings %q", c.DecodeGraphMaxBS(), c.ParseWarnings)
			}
		}},
		{"abbreviations as argparse's allow_abbrev", "--tp 4 --served-model kimi --mem-fraction=0.8", nil, func(t *testing.T, c *Config) {
			if c.TP != 4 || c.ModelName() != "kimi" || c.MemFractionStatic != 0.8 || c.Given["tp_size"] != "4" {
				t.Errorf("got tp %d, name %q, mem %v", c.TP, c.ModelName(), c.MemFractionStatic)
			}
		}},
		{"speculative algorithms as SGLang's builtins, any case", "--speculative-algorithm dflash", nil, func(t *testing.T, c *Config) {
			if c.SpecAlgorithm != "DFLASH" || c.UnknownSpecAlgorithm() != "" {
				t.Errorf("algorithm %q", c.SpecAlgorithm)
			}
		}},
		{"equals form and alias", "--tensor-parallel-size=4 --port=31001 --mem-fraction-static=0.8 --served-model-name=kimi --model=/m", nil, func(t *testing.T, c *Config) {
			if c.TP != 4 || c.Port != 31001 || c.MemFractionStatic != 0.8 || c.ModelName() != "kimi" || c.Given["model_path"] != "/m" {
				t.Errorf("got %+v", c)
			}
		}},
		{"topk1 forces steps+1 draft tokens", simtest.Topk1 + " --speculative-num-draft-tokens=16", nil, func(t *testing.T, c *Config) {
			if c.DraftTokens() != 4 {
				t.Errorf("draft tokens %d, want 4", c.DraftTokens())
			}
		}},
		{"overlap worker by default, topk 4 included", strings.ReplaceAll(simtest.Topk4, "--disable-overlap-schedule", ""), nil, func(t *testing.T, c *Config) {
			if !c.Overlap() || len(c.Notices) != 0 {
				t.Errorf("overlap %v, notices %q", c.Overlap(), c.Notices)
			}
		}},
		{"synchronous path", simtest.Topk4, nil, func(t *testing.T, c *Config) {
			if c.Overlap() || c.Given["disable_overlap_schedule"] != "true" {
				t.Error("--disable-overlap-schedule not seen")
			}
		}},
		{"SGLANG_ENABLE_SPEC_V2 only gets SGLang's notice", simtest.Topk1, map[string]string{SpecV2Env: "1"}, func(t *testing.T, c *Config) {
			want := []string{"SGLANG_ENABLE_SPEC_V2 has been removed: speculative decoding always runs the V2 worker. Use --disable-overlap-schedule to select the non-overlap (synchronous) path."}
			if !c.Overlap() || !slices.Equal(c.Notices, want) {
				t.Errorf("overlap %v, notices %q", c.Overlap(), c.Notices)
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
			if s := c.Sim; s.LaunchSigma != 0.01 || s.Drift != 0.02 || s.DriftTau != 2*time.Minute {
				t.Errorf("launch noise σ %v, drift %v over %v", s.LaunchSigma, s.Drift, s.DriftTau)
			}
		}},
		{"no launch noise by default", "", nil, func(t *testing.T, c *Config) {
			if s := c.Sim; s.LaunchSigma != 0 || s.Drift != 0 || s.DriftTau != 0 || s.HostDrift {
				t.Errorf("launch noise σ %v, drift %v over %v, host drift %v", s.LaunchSigma, s.Drift, s.DriftTau, s.HostDrift)
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
		{"state dir from env", "", map[string]string{gpu.SimStateEnv: "/tmp/state-x"}, func(t *testing.T, c *Config) {
			if c.Sim.StateDir != "/tmp/state-x" {
				t.Errorf("state dir %q", c.Sim.StateDir)
			}
		}},
		{"no prefix cache by default", "", nil, func(t *testing.T, c *Config) {
			if c.CacheOn() || c.TotalTokens() != KVCacheTokens || c.CachePage() != DefaultCachePage || c.EnableCacheReport {
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
			if c.Given["trust_remote_code"] != "true" || c.ContextLength != 8192 || c.ChunkedPrefillSize != 4096 || c.LogLevel != "warning" {
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
		{"--tp_size 8", "unrecognized arguments: --tp_size 8"},
		{"--port", "argument --port: expected one argument"},
		{"--model-path", "argument --model-path/--model: expected one argument"},
		{"--port abc", "argument --port: invalid int value: 'abc'"},
		{"--cuda-graph-bs-decode", "argument --cuda-graph-bs-decode: expected at least one argument"},
		{"--cuda-graph-bs-decode 1 x", "argument --cuda-graph-bs-decode: invalid int value: 'x'"},
		{"--stream-interval 0", "argument --stream-interval: invalid positive int value: '0'"},
		{"--page-size 0", "argument --page-size: invalid positive int value: '0'"},
		{"--max-total-tokens 0", "argument --max-total-tokens: invalid positive int value: '0'"},
		// human_readable_int's own words (python/sglang/srt/utils/common.py).
		{"--max-total-tokens x", "argument --max-total-tokens: Invalid integer value: 'x'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive."},
		{"--context-length 1.5Ki", "argument --context-length: Decimals are not allowed with IEC suffixes like 'Ki'. Use an integer IEC value such as '1Ki', or an SI value such as '1.5K'."},
		{"--sim-prefix-cache=1", "argument --sim-prefix-cache: ignored explicit argument '1'"},
		{"--enable-metrics=yes", "argument --enable-metrics: ignored explicit argument 'yes'"},
		{"--attention-backend flashattn", "argument --attention-backend: invalid choice: 'flashattn' (choose from 'triton', 'torch_native', "},
		{"--flashinfer-allreduce-fusion-backend on", "argument --flashinfer-allreduce-fusion-backend: invalid choice: 'on' (choose from 'auto', 'trtllm', 'mnnvl', 'cutedsl')"},
		{"--cuda-graph-max 64", "ambiguous option: --cuda-graph-max could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill, --cuda-graph-max-seq-len-prefill, --cuda-graph-max-bs"},
		{"--speculative-num=3", "ambiguous option: --speculative-num=3 could match --speculative-num-steps, --speculative-num-draft-tokens"},
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
			_, err := ParseArgs(strings.Fields(tt.args), simtest.NoEnv)
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *ArgError", err)
			}
			msg := err.Error()
			_, last, _ := strings.Cut(msg, "\nsglang serve: error: ")
			if !strings.Contains(last, tt.want) || !strings.HasPrefix(msg, "usage: sglang serve [-h] ") {
				t.Errorf("error:\n%s\nwant it to end in %q after the usage", simtest.Tail(msg, 2), tt.want)
			}
		})
	}
	if _, err := ParseArgs([]string{"--port", "1", "--help", "--foo"}, simtest.NoEnv); !errors.Is(err, ErrHelp) {
		t.Errorf("--help: %v, want ErrHelp", err)
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
		c, err := ParseArgs(strings.Fields(tt.args), simtest.NoEnv)
		if err != nil {
			t.Fatal(err)
		}
		if n, reset := c.RunningCap(); n != tt.want || reset != tt.wantReset {
			t.Errorf("%s: cap %d reset %v, want %d %v", tt.args, n, reset, tt.want, tt.wantReset)
		}
	}
}

// TestRunFactor: BAKEOFF_SIM_RUN_FACTOR slows every server started with it
// on top of its own --sim-slowdown (a run effect over a whole campaign),
// and a factor that is not one is refused by name.
func TestRunFactor(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == SimRunFactorEnv {
				return v
			}
			return ""
		}
	}
	c, err := ParseArgs([]string{"--model-path", "/m", "--sim-slowdown", "2"}, env("1.05"))
	if err != nil || c.Sim.Slowdown != 2*1.05 {
		t.Fatalf("slowdown %v, %v; want 2.1", c.Sim.Slowdown, err)
	}
	for _, bad := range []string{"0", "-1", "fast"} {
		if _, err := ParseArgs([]string{"--model-path", "/m"}, env(bad)); err == nil || !strings.Contains(err.Error(), SimRunFactorEnv) {
			t.Errorf("%s=%s: %v", SimRunFactorEnv, bad, err)
		}
	}
}
