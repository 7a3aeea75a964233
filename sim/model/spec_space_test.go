package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// specConfig is the seeds' baseline server with speculative flags after it,
// on the seeds' SM100 host (allreduce fusion on, as calibrated).
func specConfig(t testing.TB, spec string) *cmdline.Config {
	t.Helper()
	c, err := cmdline.ParseArgs(strings.Fields(simtest.Baseline+" "+spec), simtest.Seeds[1].Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eagle(steps, topk, draft int, extra string) string {
	return fmt.Sprintf("--speculative-algorithm EAGLE3 --speculative-num-steps %d --speculative-eagle-topk %d --speculative-num-draft-tokens %d %s", steps, topk, draft, extra)
}

// TestAcceptanceShape: the mean accept length saturates with steps and grows
// with the tree's width (topk) and size (draft tokens); the calibrated
// configurations keep their acceptance.
func TestAcceptanceShape(t *testing.T) {
	accept := func(steps, topk, draft int, extra string) float64 {
		return NewPerf(specConfig(t, eagle(steps, topk, draft, extra))).MeanAccept()
	}
	t.Run("saturates with steps", func(t *testing.T) {
		for _, drafter := range []string{"", "--sim-draft-accept 0.8"} {
			prev, gain := accept(1, 1, 2, drafter), math.Inf(1)
			for s := 2; s <= 7; s++ {
				a := accept(s, 1, s+1, drafter)
				if a-prev <= 0 || a-prev >= gain {
					t.Errorf("%q: step %d adds %.3f after %.3f; want less, but more than nothing", drafter, s, a-prev, gain)
				}
				prev, gain = a, a-prev
			}
		}
	})
	for _, tt := range []struct {
		name         string
		lower, upper [3]int // steps, topk, draft tokens
	}{
		{"topk 2 beats a chain", [3]int{3, 1, 4}, [3]int{3, 2, 7}},
		{"topk 4 beats topk 2", [3]int{3, 2, 7}, [3]int{3, 4, 13}},
		{"more draft tokens, same topk", [3]int{3, 4, 8}, [3]int{3, 4, 13}},
		{"fewer draft tokens, same topk", [3]int{3, 4, 5}, [3]int{3, 4, 8}},
	} {
		lo, hi := accept(tt.lower[0], tt.lower[1], tt.lower[2], ""), accept(tt.upper[0], tt.upper[1], tt.upper[2], "")
		if hi <= lo {
			t.Errorf("%s: %v accepts %.3f, %v %.3f", tt.name, tt.upper, hi, tt.lower, lo)
		}
	}
	if a, b := accept(3, 4, 13, ""), accept(3, 4, 20, ""); a != b {
		t.Errorf("a tree is at most topk wide: 13 draft tokens accept %.4f, 20 %.4f", a, b)
	}
	if a := accept(5, 4, 4, ""); a >= 4 {
		t.Errorf("3 draft nodes cannot accept more than 3: mean %.3f", a)
	}
	for _, tt := range []struct {
		name string
		perf Perf
		want float64
	}{
		{"eagle3-topk1-specv2", NewPerf(simtest.Config(t, cmdline.ParseArgs, "eagle3-topk1-specv2")), 0.56},
		{"eagle3-topk4", NewPerf(simtest.Config(t, cmdline.ParseArgs, "eagle3-topk4")), 1 - 0.44*math.Pow(4, -0.24)},
	} {
		if tt.perf.acceptP != tt.want {
			t.Errorf("%s: per-position acceptance %v, calibrated %v", tt.name, tt.perf.acceptP, tt.want)
		}
	}
}

// TestStepCostShape: the draft costs steps × batch × topk, the verify
// batch × draft tokens, so every extra step and draft token costs more the
// larger the batch.
func TestStepCostShape(t *testing.T) {
	step := func(steps, topk, draft, batch int) time.Duration {
		return NewPerf(specConfig(t, eagle(steps, topk, draft, ""))).DecodeStep(batch)
	}
	perToken := NewPerf(specConfig(t, "")).scaled(fittedCosts.PerToken)
	for _, b := range []int{1, 4, 16, 64} {
		for _, k := range []int{2, 4} {
			want := time.Duration(float64(draftFixed) + float64(b*k)*float64(draftPerToken))
			if got := step(4, k, 9, b) - step(3, k, 9, b); (got - want).Abs() > time.Nanosecond {
				t.Errorf("batch %d topk %d: a step costs %v, want %v (steps × batch × topk)", b, k, got, want)
			}
		}
		if got, want := step(3, 4, 9, b)-step(3, 4, 8, b), time.Duration(float64(b)*perToken); (got - want).Abs() > time.Nanosecond {
			t.Errorf("batch %d: a draft token costs %v, want %v (batch × draft tokens)", b, got, want)
		}
	}
}

// specSpace is a 15-point space of a campaign's race: steps 1–5 × topk 1,
// 2, 4, each tree full (topk·steps + 1 draft tokens: every depth topk wide;
// topk 1 is SGLang's forced steps+1).
func specSpace() [][3]int {
	var space [][3]int
	for _, k := range []int{1, 2, 4} {
		for s := 1; s <= 5; s++ {
			space = append(space, [3]int{s, k, k*s + 1})
		}
	}
	return space
}

// TestSpecSpaceTrueBest: the true best configuration of the space at each
// concurrency, as a race of it must find: the best step count never rises
// with the load, topk > 1 wins only at the smallest load, speculation off
// beats the whole space at the largest, and each best leads its runner-up
// by a margin a race can resolve over a few rounds (one run's throughput
// scatters by about 1.3% at C = 1 from its accept lengths, less above).
// The seeds' drafter (2.05 tokens a step with 3 steps) wins with 2 steps at
// C = 1, a drafter accepting 0.654 at each position (the first-position
// acceptance of vLLM's Qwen3-8B EAGLE-3 speculator,
// tests/v1/spec_decode/test_acceptance_length.py) with 3. -v prints the
// tables docs/SIM.md shows.
func TestSpecSpaceTrueBest(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2000 virtual runs")
	}
	const (
		runs      = 16     // seeded runs per figure: ±0.3% at C = 1
		resolvent = 0.0125 // the least lead over the runner-up
	)
	levels := []int{1, 4, 16, 64}
	for _, tt := range []struct {
		name, extra string
		wantSteps   []int
	}{
		{"the seeds' drafter, synchronous path", "--disable-overlap-schedule", []int{2, 1, 1, 1}},
		{"a drafter accepting 0.654, overlap path", "--sim-draft-accept 0.654", []int{3, 2, 1, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var table strings.Builder
			table.WriteString("| C | best | tok/s | runner-up | tok/s | lead | speculation off |\n| ---: | --- | ---: | --- | ---: | ---: | ---: |\n")
			var steps []int
			for i, c := range levels {
				load := ClosedLoop{Concurrency: c, Requests: max(30, 4*c), MaxTokens: 200, PromptTokens: simtest.CalibrationPromptTokens}
				type point struct {
					cfg [3]int
					tps float64
				}
				var pts []point
				for _, p := range specSpace() {
					pts = append(pts, point{p, TrueThroughput(specConfig(t, eagle(p[0], p[1], p[2], tt.extra)), load, runs)})
				}
				slices.SortFunc(pts, func(a, b point) int { return int(math.Copysign(1, b.tps-a.tps)) })
				best, second := pts[0], pts[1]
				off := TrueThroughput(specConfig(t, ""), load, runs)
				lead := best.tps/second.tps - 1
				fmt.Fprintf(&table, "| %d | %v | %.1f | %v | %.1f | %+.1f%% | %.1f |\n", c, best.cfg, best.tps, second.cfg, second.tps, 100*lead, off)
				steps = append(steps, best.cfg[0])
				if lead < resolvent {
					t.Errorf("C=%d: %v leads %v by %.2f%%, less than a race resolves", c, best.cfg, second.cfg, 100*lead)
				}
				if i > 0 && best.cfg[1] > 1 {
					t.Errorf("C=%d: topk %d wins above the smallest load", c, best.cfg[1])
				}
				if i == 0 && best.cfg[1] == 1 {
					t.Errorf("C=%d: a chain wins; a tree should pay at the smallest load", c)
				}
				if i == len(levels)-1 && off <= best.tps {
					t.Errorf("C=%d: speculation off reads %.1f, the space's best %.1f", c, off, best.tps)
				}
			}
			t.Logf("best of the space [steps topk draft-tokens] by concurrency (%d runs a figure):\n%s", runs, table.String())
			if !slices.Equal(steps, tt.wantSteps) {
				t.Errorf("best steps by level %v, want %v", steps, tt.wantSteps)
			}
			for i := 1; i < len(steps); i++ {
				if steps[i] > steps[i-1] {
					t.Errorf("best steps rise from %d to %d between C=%d and C=%d", steps[i-1], steps[i], levels[i-1], levels[i])
				}
			}
		})
	}
}

// TestAdaptiveBands: SGLang's adaptive speculative decoding switches steps by
// the running batch's band, padded to the next captured CUDA-graph size; a
// band at 0 steps verifies one token a request without drafting, and still
// pays the verify's extra cost and the draft extend.
func TestAdaptiveBands(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bands.json")
	if err := os.WriteFile(path, []byte(`{"1": {"candidate_steps": [3]}, "16": {"candidate_steps": [1]}, "64": {"candidate_steps": [0]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := specConfig(t, "--speculative-algorithm EAGLE3 --speculative-adaptive --speculative-adaptive-config "+path)
	if cfg.Adaptive == nil {
		t.Fatalf("adaptive off: %q", cfg.Notices)
	}
	perf := NewPerf(cfg)
	for _, tt := range []struct{ batch, steps int }{{1, 3}, {14, 3}, {15, 1}, {16, 1}, {60, 1}, {61, 0}, {64, 0}, {200, 0}} {
		s := NewScheduler(perf, 256, 8192, rand.New(rand.NewPCG(1, 1)))
		for i := range tt.batch {
			s.Add(&Job{ID: uint64(i), PromptTokens: 10, Target: 50})
		}
		s.Step() // the prefill
		r := s.Step()
		if r.Steps != tt.steps {
			t.Errorf("batch %d drafts %d steps, want %d", tt.batch, r.Steps, tt.steps)
		}
		if tt.steps == 0 && r.AcceptSum != r.AcceptN {
			t.Errorf("batch %d at 0 steps accepted %d tokens for %d requests", tt.batch, r.AcceptSum, r.AcceptN)
		}
	}
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 40, 44, 48, 50}
	if got := specGraphBatchSizes(50); !slices.Equal(got, want) {
		t.Errorf("graph batch sizes to 50: %v, want %v", got, want)
	}
	plain := NewPerf(specConfig(t, ""))
	for _, b := range []int{1, 64} {
		off, one := perf.decodeStepAt(b, 0), perf.decodeStepAt(b, 1)
		if off <= plain.DecodeStep(b) || off >= one {
			t.Errorf("batch %d: 0 steps costs %v; want more than no speculation (%v), less than 1 step (%v)", b, off, plain.DecodeStep(b), one)
		}
	}
}

// TestAdaptiveEMA: within a band the EMA of accepted drafts moves the steps
// as SGLang's AdaptiveStepSlot does: nothing before the warm-up's 10 rounds,
// then every 5, down past candidates whose threshold it is under, up past
// those it is over; a band at 0 steps probes the next candidate.
func TestAdaptiveEMA(t *testing.T) {
	slot := func(cands []int, current int) *emaSlot {
		return &emaSlot{AdaptiveSlot: cmdline.AdaptiveSlot{Candidates: cands, EMAAlpha: 0.2, UpdateInterval: 5, WarmupBatches: 10, DownHysteresis: -0.25},
			current: current, ema: float64(current - 1)}
	}
	for _, tt := range []struct {
		name            string
		cands           []int
		start, accepted int
		rounds, want    int
		notice          string
	}{
		{"nothing changes in the warm-up", []int{1, 3, 5, 7}, 3, 0, 14, 3, ""},
		{"no drafts accepted: down to 1", []int{1, 3, 5, 7}, 3, 0, 15, 1, "Adaptive spec params updated: steps 3 -> 1 (ema_accept_len=0.07)"},
		{"one accepted: stays", []int{1, 3, 5, 7}, 3, 1, 15, 3, ""},
		{"three accepted: up to 5", []int{1, 3, 5, 7}, 3, 3, 15, 5, "Adaptive spec params updated: steps 3 -> 5 (ema_accept_len=2.96)"},
		{"off probes the next candidate", []int{0, 2}, 0, 0, 15, 2, "Adaptive spec params updated: steps 0 -> 2 (ema_accept_len=1.00)"},
	} {
		s := slot(tt.cands, tt.start)
		var notice string
		for range tt.rounds {
			if n := s.update([]int{tt.accepted, tt.accepted}); n != "" {
				notice = n
			}
		}
		if s.current != tt.want || notice != tt.notice {
			t.Errorf("%s: steps %d (%q), want %d (%q)", tt.name, s.current, notice, tt.want, tt.notice)
		}
	}
}

// TestAdaptiveFollowsTheBands: set to the true best chain of each band, one
// adaptive server reads within 1% of the best static chain at every level,
// where no static chain stays within 1% at all of them: switching by batch
// size is worth what a per-band race finds.
func TestAdaptiveFollowsTheBands(t *testing.T) {
	if testing.Short() {
		t.Skip("virtual runs")
	}
	const runs, within = 16, 0.01
	path := filepath.Join(t.TempDir(), "bands.json")
	if err := os.WriteFile(path, []byte(`{"1": {"candidate_steps": [3]}, "4": {"candidate_steps": [2]}, "16": {"candidate_steps": [1]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const drafter = "--sim-draft-accept 0.654"
	adaptive := specConfig(t, "--speculative-algorithm EAGLE3 --speculative-adaptive --speculative-adaptive-config "+path+" "+drafter)
	everywhere := map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true}
	for _, c := range []int{1, 4, 16, 64} {
		load := ClosedLoop{Concurrency: c, Requests: max(30, 4*c), MaxTokens: 200, PromptTokens: simtest.CalibrationPromptTokens}
		static := map[int]float64{}
		best, bestSteps := 0.0, 0
		for s := 1; s <= 5; s++ {
			static[s] = TrueThroughput(specConfig(t, eagle(s, 1, s+1, drafter)), load, runs)
			if static[s] > best {
				best, bestSteps = static[s], s
			}
		}
		for s, tps := range static {
			if tps < best*(1-within) {
				delete(everywhere, s)
			}
		}
		got := TrueThroughput(adaptive, load, runs)
		t.Logf("C=%d: adaptive %.1f tok/s, the best static chain %.1f (%d steps)", c, got, best, bestSteps)
		if got < best*(1-within) {
			t.Errorf("C=%d: adaptive %.1f tok/s, the best static chain %.1f", c, got, best)
		}
	}
	if len(everywhere) > 0 {
		t.Errorf("static chains within 1%% of the best at every level: %v", everywhere)
	}
}
