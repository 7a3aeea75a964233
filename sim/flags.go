package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ArgError is a command-line error worded as SGLang's argparse words it, so
// that a typo in a scenario fails the same way against the sim and the real
// server. Error returns the two stderr lines (usage, then the error).
type ArgError struct{ Msg string }

func (e *ArgError) Error() string {
	return usageLine + "\n" + progName + ": error: " + e.Msg
}

const (
	progName  = "launch_server.py"
	usageLine = "usage: " + progName + " [-h] --model-path MODEL_PATH [--host HOST] [--port PORT] [--tp TP]\n" +
		"                        [--speculative-algorithm {EAGLE,EAGLE3,NEXTN,STANDALONE,NGRAM}] ...\n" +
		"                        [--sim-speed X] [--sim-fault NAME[=ARG]] ..."
)

// flagKind says how a flag takes its value.
type flagKind int

const (
	kindValue flagKind = iota // --key value or --key=value
	kindBool                  // bare --key
)

// flagSpec is one accepted flag: its names (the first is canonical), kind, and
// how it sets the Config. A nil set accepts and records the flag only.
type flagSpec struct {
	names []string
	kind  flagKind
	set   func(c *Config, v string) error
}

func intFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		*dst(c) = n
		return nil
	}
}

// posIntFlag is intFlag for a count that must be at least 1 (a modulus).
func posIntFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid positive int value: '%s'", v)
		}
		*dst(c) = n
		return nil
	}
}

func floatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("invalid float value: '%s'", v)
		}
		*dst(c) = f
		return nil
	}
}

// nonNegFloatFlag is floatFlag for a σ: negative values are refused.
func nonNegFloatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid non-negative float value: '%s'", v)
		}
		*dst(c) = f
		return nil
	}
}

func strFlag(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func boolFlag(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, _ string) error { *dst(c) = true; return nil }
}

func durFlag(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration value: '%s'", v)
		}
		*dst(c) = d
		return nil
	}
}

// sglangFlags are SGLang's launch flags the sim understands or accepts.
var sglangFlags = []flagSpec{
	{names: []string{"model-path", "model"}, set: strFlag(func(c *Config) *string { return &c.ModelPath })},
	{names: []string{"served-model-name"}, set: strFlag(func(c *Config) *string { return &c.ServedModelName })},
	{names: []string{"host"}, set: strFlag(func(c *Config) *string { return &c.Host })},
	{names: []string{"port"}, set: intFlag(func(c *Config) *int { return &c.Port })},
	{names: []string{"tp", "tensor-parallel-size", "tp-size"}, set: intFlag(func(c *Config) *int { return &c.TP })},
	{names: []string{"speculative-algorithm"}, set: func(c *Config, v string) error {
		switch v {
		case "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM":
			c.SpecAlgorithm = v
			return nil
		}
		return fmt.Errorf("invalid choice: '%s' (choose from 'EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM')", v)
	}},
	{names: []string{"speculative-draft-model-path"}, set: strFlag(func(c *Config) *string { return &c.DraftModelPath })},
	{names: []string{"speculative-num-steps"}, set: intFlag(func(c *Config) *int { return &c.SpecSteps })},
	{names: []string{"speculative-eagle-topk"}, set: intFlag(func(c *Config) *int { return &c.SpecTopK })},
	{names: []string{"speculative-num-draft-tokens"}, set: intFlag(func(c *Config) *int { return &c.SpecDraftTokens })},
	{names: []string{"cuda-graph-max-bs"}, set: intFlag(func(c *Config) *int { return &c.CudaGraphMaxBS })},
	{names: []string{"max-running-requests"}, set: intFlag(func(c *Config) *int { return &c.MaxRunningRequests })},
	{names: []string{"attention-backend"}, set: strFlag(func(c *Config) *string { return &c.AttentionBackend })},
	{names: []string{"enable-flashinfer-allreduce-fusion"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.AllreduceFusion })},
	{names: []string{"disable-custom-all-reduce"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.DisableCustomAR })},
	{names: []string{"enable-metrics"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.EnableMetrics })},
	{names: []string{"mem-fraction-static"}, set: floatFlag(func(c *Config) *float64 { return &c.MemFractionStatic })},
	{names: []string{"context-length"}, set: intFlag(func(c *Config) *int { return &c.ContextLength })},
	{names: []string{"chunked-prefill-size"}, set: intFlag(func(c *Config) *int { return &c.ChunkedPrefillSize })},
	{names: []string{"log-level"}, set: strFlag(func(c *Config) *string { return &c.LogLevel })},
	// Accepted and recorded, without effect on the simulation.
	{names: []string{"trust-remote-code"}, kind: kindBool},
	{names: []string{"tokenizer-path"}},
	{names: []string{"dtype"}},
	{names: []string{"quantization"}},
	{names: []string{"kv-cache-dtype"}},
	{names: []string{"dp", "data-parallel-size", "dp-size"}},
	{names: []string{"ep", "ep-size", "expert-parallel-size"}},
	{names: []string{"nnodes"}},
	{names: []string{"node-rank"}},
	{names: []string{"dist-init-addr"}},
	{names: []string{"random-seed"}},
	{names: []string{"stream-interval"}, set: posIntFlag(func(c *Config) *int { return &c.StreamInterval })},
	{names: []string{"schedule-policy"}},
	{names: []string{"max-total-tokens"}, set: posIntFlag(func(c *Config) *int { return &c.MaxTotalTokens })},
	{names: []string{"page-size"}, set: posIntFlag(func(c *Config) *int { return &c.PageSize })},
	{names: []string{"max-prefill-tokens"}},
	{names: []string{"cuda-graph-bs"}},
	{names: []string{"tool-call-parser"}},
	{names: []string{"reasoning-parser"}},
	{names: []string{"chat-template"}},
	{names: []string{"api-key"}},
	{names: []string{"log-level-http"}},
	{names: []string{"decode-log-interval"}},
	{names: []string{"watchdog-timeout"}},
	{names: []string{"moe-runner-backend"}},
	{names: []string{"sampling-backend"}},
	{names: []string{"hicache-ratio"}},
	{names: []string{"disable-cuda-graph"}, kind: kindBool},
	{names: []string{"disable-radix-cache"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.DisableRadixCache })},
	{names: []string{"enable-cache-report"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.EnableCacheReport })},
	{names: []string{"enable-torch-compile"}, kind: kindBool},
	{names: []string{"enable-dp-attention"}, kind: kindBool},
	{names: []string{"enable-mixed-chunk"}, kind: kindBool},
	{names: []string{"enable-torch-symm-mem"}, kind: kindBool},
	{names: []string{"enable-hierarchical-cache"}, kind: kindBool},
	{names: []string{"disable-overlap-schedule"}, kind: kindBool},
	{names: []string{"log-requests"}, kind: kindBool},
	{names: []string{"skip-server-warmup"}, kind: kindBool},
}

// simFlags are the sim's own knobs.
var simFlags = []flagSpec{
	{names: []string{"sim-speed"}, set: func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("invalid positive float value: '%s'", v)
		}
		c.Sim.Speed = f
		return nil
	}},
	{names: []string{"sim-load-time"}, set: durFlag(func(c *Config) *time.Duration { return &c.Sim.LoadTime })},
	{names: []string{"sim-seed"}, set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		c.Sim.Seed, c.Sim.SeedSet = n, true
		return nil
	}},
	{names: []string{"sim-slowdown"}, set: floatFlag(func(c *Config) *float64 { return &c.Sim.Slowdown })},
	{names: []string{"sim-noise"}, set: floatFlag(func(c *Config) *float64 { return &c.Sim.Noise })},
	{names: []string{"sim-launch-sigma"}, set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.LaunchSigma })},
	{names: []string{"sim-drift"}, set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.Drift })},
	{names: []string{"sim-drift-tau"}, set: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("invalid positive duration value: '%s'", v)
		}
		c.Sim.DriftTau = d
		return nil
	}},
	{names: []string{"sim-drift-scope"}, set: func(c *Config, v string) error {
		switch v {
		case "launch", "host":
			c.Sim.HostDrift = v == "host"
			return nil
		}
		return fmt.Errorf("invalid choice: '%s' (choose from 'launch', 'host')", v)
	}},
	{names: []string{"sim-prefix-cache"}, kind: kindBool, set: boolFlag(func(c *Config) *bool { return &c.Sim.PrefixCache })},
	{names: []string{"sim-gpus"}, set: intFlag(func(c *Config) *int { return &c.Sim.GPUs })},
	{names: []string{"sim-state"}, set: strFlag(func(c *Config) *string { return &c.Sim.StateDir })},
	{names: []string{"sim-fault"}, set: func(c *Config, v string) error { return c.Sim.Faults.Add(v) }},
	{names: []string{"sim-child-rank"}, set: intFlag(func(c *Config) *int { return &c.Sim.ChildRank })},
	{names: []string{"sim-parent-pid"}, set: intFlag(func(c *Config) *int { return &c.Sim.ParentPID })},
	{names: []string{"sim-parent-start"}, set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		c.Sim.ParentStart = n
		return nil
	}},
}

var flagIndex = func() map[string]*flagSpec {
	m := map[string]*flagSpec{}
	for _, list := range [][]flagSpec{sglangFlags, simFlags} {
		for i := range list {
			for _, n := range list[i].names {
				m[n] = &list[i]
			}
		}
	}
	return m
}()

// ParseArgs parses a `bakeoff sim` command line (SGLang flags and --sim-…
// knobs) with getenv for SGLANG_ENABLE_SPEC_V2, BAKEOFF_SIM_STATE and TMPDIR.
// Flag errors are *ArgError; an option error (a bad --sim-fault) too.
func ParseArgs(args []string, getenv func(string) string) (*Config, error) {
	c := &Config{
		Host:               DefaultHost,
		Port:               DefaultPort,
		TP:                 DefaultTP,
		SpecSteps:          DefaultSpecSteps,
		SpecTopK:           DefaultSpecTopK,
		CudaGraphMaxBS:     DefaultCudaGraphMaxBS,
		MemFractionStatic:  DefaultMemFractionStatic,
		ContextLength:      DefaultContextLength,
		ChunkedPrefillSize: DefaultChunkedPrefillSize,
		StreamInterval:     1,
		LogLevel:           "info",
		Given:              map[string]string{},
		Sim: SimOptions{
			Speed:     DefaultSpeed,
			LoadTime:  DefaultLoadTime,
			Slowdown:  DefaultSlowdown,
			Noise:     DefaultNoise,
			ChildRank: -1,
		},
	}
	var unknown []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			unknown = append(unknown, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		name = strings.ReplaceAll(name, "_", "-")
		spec, ok := flagIndex[name]
		if !ok {
			unknown = append(unknown, a)
			continue
		}
		canon := "--" + spec.names[0]
		switch spec.kind {
		case kindBool:
			if hasVal {
				return nil, &ArgError{fmt.Sprintf("argument %s: ignored explicit argument '%s'", canon, val)}
			}
			val = "true"
		case kindValue:
			if !hasVal {
				if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "--") && len(args[i+1]) > 2) {
					return nil, &ArgError{fmt.Sprintf("argument %s: expected one argument", canon)}
				}
				i++
				val = args[i]
			}
		}
		if spec.set != nil {
			if err := spec.set(c, val); err != nil {
				return nil, &ArgError{fmt.Sprintf("argument %s: %v", canon, err)}
			}
		}
		if !strings.HasPrefix(spec.names[0], "sim-") {
			c.Given[spec.names[0]] = val
		}
	}
	if len(unknown) > 0 {
		return nil, &ArgError{"unrecognized arguments: " + strings.Join(unknown, " ")}
	}
	if c.ModelPath == "" {
		// SGLang requires --model-path; the sim lets quick manual runs omit it.
		c.ModelPath = "bakeoff-sim/model"
	}
	c.SpecV2 = getenv(SpecV2Env) == "1" || strings.EqualFold(getenv(SpecV2Env), "true")
	if c.TP < 1 {
		return nil, &ArgError{fmt.Sprintf("argument --tp: invalid value: %d", c.TP)}
	}
	if c.Sim.GPUs == 0 {
		c.Sim.GPUs = c.TP
	}
	if c.Sim.SeedSet {
		c.Sim.Seed, c.Sim.SeedMix = mixLaunch(c.Sim.Seed, getenv)
	}
	if c.Sim.StateDir == "" {
		c.Sim.StateDir = DefaultStateDir(getenv)
	}
	return c, nil
}

// mixLaunch mixes the launch the orchestrator names (LaunchEnv, RoundEnv)
// into a --sim-seed: without it, a --sim-seed in a campaign's engine command
// or scenario would give every launch, in every round, the same launch
// factor and drift, a persistent offset that no number of rounds reveals.
// The result is reproducible: the same seed and launch give the same draw.
func mixLaunch(seed int64, getenv func(string) string) (int64, string) {
	var mix []string
	for _, k := range []string{LaunchEnv, RoundEnv} {
		if v := getenv(k); v != "" {
			mix = append(mix, k+"="+v)
		}
	}
	if len(mix) == 0 {
		return seed, ""
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", seed)
	for _, m := range mix {
		fmt.Fprintf(h, "\x00%s", m)
	}
	return int64(h.Sum64() &^ (1 << 63)), strings.Join(mix, " ")
}

// DefaultStateDir is $BAKEOFF_SIM_STATE, else $TMPDIR/bakeoff-sim-state-<uid>.
func DefaultStateDir(getenv func(string) string) string {
	if d := getenv(SimStateEnv); d != "" {
		return d
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, fmt.Sprintf("bakeoff-sim-state-%d", os.Getuid()))
}
