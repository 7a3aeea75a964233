package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

func virtual(cfg *cmdline.Config, c int) VirtualResult {
	return RunVirtual(cfg, ClosedLoop{Concurrency: c, Requests: max(30, 4*c), MaxTokens: 200, PromptTokens: simtest.CalibrationPromptTokens}, 1)
}

func TestModelShape(t *testing.T) {
	base := NewPerf(simtest.Config(t, cmdline.ParseArgs, "baseline"))
	topk4 := NewPerf(simtest.Config(t, cmdline.ParseArgs, "eagle3-topk4"))
	for b := 1; b < 256; b++ {
		if base.DecodeStep(b+1) <= base.DecodeStep(b) || topk4.DecodeStep(b+1) <= topk4.DecodeStep(b) {
			t.Fatalf("step time does not grow with the batch at %d", b)
		}
	}
	// Verify cost grows with batch × draft tokens: the speculative step
	// grows faster with the batch than the plain one.
	if d4, d := topk4.DecodeStep(100)-topk4.DecodeStep(1), base.DecodeStep(100)-base.DecodeStep(1); d4 < 4*d {
		t.Errorf("verify growth %v not ≫ decode growth %v", d4, d)
	}
	// Without allreduce fusion the verify pays more allreduce latency; the
	// plain decode does not care (the seeds: 92.7 vs 92.6 tok/s).
	noFusion := func(name string) Perf {
		return NewPerf(simtest.Config(t, cmdline.ParseArgs, name, "--enforce-disable-flashinfer-allreduce-fusion"))
	}
	if noFusion("eagle3-topk4").DecodeStep(1) <= topk4.DecodeStep(1) || noFusion("baseline").DecodeStep(1) != base.DecodeStep(1) {
		t.Error("allreduce fusion should speed up the verify only")
	}
	// The overlap worker, SGLang's default, pays the seeds' spec-v2 sync
	// every step; the synchronous path (the seeds' classic worker) does not.
	overlapCfg, err := cmdline.ParseArgs(strings.Fields(strings.ReplaceAll(simtest.Topk4, " --disable-overlap-schedule", "")), simtest.Seeds[1].Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if d := NewPerf(overlapCfg).DecodeStep(1) - topk4.DecodeStep(1); d != fittedCosts.SpecV2Sync {
		t.Errorf("overlap worker costs %v more per step than the synchronous path, want %v", d, fittedCosts.SpecV2Sync)
	}
	slow := NewPerf(simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-slowdown", "1.05"))
	if r := float64(slow.DecodeStep(10)) / float64(base.DecodeStep(10)); math.Abs(r-1.05) > 1e-6 {
		t.Errorf("slowdown ratio %.4f, want 1.05", r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sum, n := 0, 20000
	for range n {
		a := topk4.DrawAccept(rng)
		if a < 1 || a > 4 {
			t.Fatalf("accept length %d outside 1..steps+1", a)
		}
		sum += a
	}
	if mean := float64(sum) / float64(n); math.Abs(mean-topk4.MeanAccept()) > 0.03 {
		t.Errorf("mean accept %.3f, model says %.3f", mean, topk4.MeanAccept())
	}
	if base.DrawAccept(rng) != 1 {
		t.Error("a plain step must emit one token")
	}
}

// TestNoiseVariesRuns: unseeded noise makes repeated runs differ, a little.
func TestNoiseVariesRuns(t *testing.T) {
	cfg := simtest.Config(t, cmdline.ParseArgs, "baseline")
	a := RunVirtual(cfg, ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}, 1).Throughput
	b := RunVirtual(cfg, ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}, 2).Throughput
	if a == b || math.Abs(a/b-1) > 0.02 {
		t.Errorf("seeds 1 and 2: %.2f vs %.2f tok/s; want different but within 2%%", a, b)
	}
	quiet := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", "0")
	a = RunVirtual(quiet, ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}, 1).Throughput
	b = RunVirtual(quiet, ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}, 2).Throughput
	if a != b {
		t.Errorf("without noise a plain model is deterministic: %.3f vs %.3f", a, b)
	}
}

// TestSpecCap48: a speculative run without --max-running-requests decodes
// at most 48 requests at once and queues the rest.
func TestSpecCap48(t *testing.T) {
	for _, tt := range []struct {
		extra string
		want  int
	}{
		{"", 48},
		{"--max-running-requests 64", 64},
	} {
		args := "--tp 8 --speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 " + tt.extra
		cfg, err := cmdline.ParseArgs(strings.Fields(args), simtest.NoEnv)
		if err != nil {
			t.Fatal(err)
		}
		maxRun, _ := cfg.RunningCap()
		s := NewScheduler(NewPerf(cfg), maxRun, cfg.ChunkedPrefillSize, rand.New(rand.NewPCG(1, 1)))
		for i := range 100 {
			s.Add(&Job{ID: uint64(i), PromptTokens: 30, Target: 50})
		}
		peak, queuedAtPeak := 0, 0
		for !s.Idle() {
			s.Step()
			if s.Running() > peak {
				peak, queuedAtPeak = s.Running(), s.Waiting()
			}
		}
		if peak != tt.want || queuedAtPeak != 100-tt.want {
			t.Errorf("%q: peak running %d (queued %d), want %d", tt.extra, peak, queuedAtPeak, tt.want)
		}
	}
}

func TestSchedulerTokens(t *testing.T) {
	cfg := simtest.Config(t, cmdline.ParseArgs, "eagle3-topk4")
	s := NewScheduler(NewPerf(cfg), 256, 8192, rand.New(rand.NewPCG(3, 3)))
	jobs := []*Job{{PromptTokens: 10, Target: 1}, {PromptTokens: 10, Target: 7}, {PromptTokens: 10, Target: 200}}
	for _, j := range jobs {
		s.Add(j)
	}
	got := map[*Job]int{}
	multi := false
	for !s.Idle() {
		r := s.Step()
		for _, e := range r.Emits {
			got[e.Job] += e.Tokens
			if e.Tokens > 1 {
				multi = true
			}
			if e.Done != (got[e.Job] == e.Job.Target) {
				t.Fatalf("done flag wrong at %d/%d", got[e.Job], e.Job.Target)
			}
		}
	}
	for _, j := range jobs {
		if got[j] != j.Target {
			t.Errorf("job got %d tokens, want exactly %d", got[j], j.Target)
		}
	}
	if !multi {
		t.Error("speculative steps never emitted several tokens at once")
	}
}
