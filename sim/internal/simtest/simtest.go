// Package simtest is what the tests of every room of the sim share: the
// command lines of the seeds' campaign, the three scenarios the sim is
// calibrated on, and small helpers.
package simtest

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

// The three scenarios of the seeds' campaign in SGLang's spellings as the
// sim follows it (docs/SIM.md): the seeds' deprecated fusion flag is left
// out, as SGLang refuses it on their RTX PRO 6000s (SM120).
const (
	Baseline = "--model-path /data/models/Kimi-K2.5-INT4 --tp 8 --cuda-graph-max-bs-decode 128 --attention-backend flashinfer --disable-custom-all-reduce --max-running-requests 256"
	Eagle    = " --speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3"
	// Topk4 is the seeds' classic EAGLE worker, which never overlapped:
	// SGLang's synchronous path.
	Topk4 = Baseline + Eagle + " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 --disable-overlap-schedule"
	// Topk1 is the seeds' spec-v2 run: the overlap worker, which SGLang
	// now runs by default.
	Topk1 = Baseline + Eagle + " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)

// NoEnv is an empty environment.
func NoEnv(string) string { return "" }

// Tail is the last n lines of s, for a failure's message.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// SeedsGPU is what the calibration scenarios run on. The seeds' build fused
// allreduce on their SM120 GPUs; SGLang as followed fuses only on SM90 and
// SM10x, where it turns fusion on by itself at tp 8 (cmdline's fusion.go),
// so the scenarios that reproduce the seeds' figures simulate an SM100 GPU.
var SeedsGPU = map[string]string{gpu.SimComputeCapEnv: "10.0"}

// Scenario is one of the seeds' scenarios: its name, command line and
// environment.
type Scenario struct {
	Name string
	Args string
	Env  map[string]string
}

// Seeds are the seeds' three scenarios.
var Seeds = []Scenario{
	{"baseline", Baseline, SeedsGPU},
	{"eagle3-topk4", Topk4, SeedsGPU},
	{"eagle3-topk1-specv2", Topk1, SeedsGPU},
}

// Getenv reads the scenario's environment.
func (s Scenario) Getenv(k string) string { return s.Env[k] }

// Fields is the scenario's command line with extra flags after it.
func (s Scenario) Fields(extra ...string) []string {
	return append(strings.Fields(s.Args), extra...)
}

// CalibrationPromptTokens is the prompt length of the calibration runs
// (the built-in prompts are 20–40 tokens with the chat template).
const CalibrationPromptTokens = 32

// Config is the seeds' scenario name parsed by parse (cmdline.ParseArgs,
// which this package cannot import: the command line's own tests use it),
// with extra flags after it.
func Config[C any](t testing.TB, parse func([]string, func(string) string) (C, error), name string, extra ...string) C {
	t.Helper()
	for _, sc := range Seeds {
		if sc.Name == name {
			c, err := parse(sc.Fields(extra...), sc.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("no scenario %s", name)
	var zero C
	return zero
}

// DisaggSetups are the configurations docs/SIM.md compares, parsed by parse
// (cmdline.ParseArgs): one aggregated tp-8 server against a prefill and a
// decode worker of tp 4 each, on the same eight GPUs.
func DisaggSetups[C any](t testing.TB, parse func([]string, func(string) string) (C, error)) (agg, prefill, decode C) {
	t.Helper()
	one := func(args string) C {
		c, err := parse(strings.Fields(args), NoEnv)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return one("--tp-size 8"), one("--tp-size 4 --disaggregation-mode prefill"), one("--tp-size 4 --disaggregation-mode decode")
}
