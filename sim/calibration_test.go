package sim

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// sweepLoad is what sweepSim sends at each level.
type sweepLoad struct {
	requests  func(c int) int
	maxTokens int
	// wall reads the level's tokens over its whole makespan (what the
	// seeds' benchmark script reports) instead of the steady-state
	// throughput (what bakeoff reports).
	wall bool
}

// sweepSim runs loadgen against a sim of scenario sc at speed and returns
// the throughput per level, divided by the speed (simulated tok/s,
// comparable to the seeds).
func sweepSim(t *testing.T, sc scenario, speed float64, levels []int, load sweepLoad) map[int]float64 {
	t.Helper()
	p := startSim(t, sc.env, sc.fields("--sim-speed", strconv.FormatFloat(speed, 'g', -1, 64))...)
	p.waitHealthy()
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]float64{}
	for _, c := range levels {
		res, err := loadgen.Run(ctxT(t, 5*time.Minute), loadgen.Options{
			URL: p.url(""), Concurrency: []int{c}, Requests: load.requests(c), MaxTokens: load.maxTokens,
			IgnoreEOS: true, Temperature: 0, Prompts: set, Warmup: min(c, 5),
		})
		if err != nil {
			t.Fatalf("%s C=%d: %v", sc.name, c, err)
		}
		lv := res.Levels[0]
		if lv.Failed > 0 {
			t.Fatalf("%s C=%d: %d requests failed: %v", sc.name, c, lv.Failed, lv.FailedByClass)
		}
		out[c] = lv.Throughput / speed
		if load.wall {
			out[c] = lv.WallThroughput / speed
		}
	}
	p.stop() // now, not at the end of the test: idle servers still cost CPU
	return out
}

// TestCalibrationSweep measures the three seed scenarios through the real
// server with the real load generator at a high --sim-speed, under the
// 773/354 run's load (512 tokens, at most 30 requests in flight), and checks
// the ratios between scenarios at C=1 and C=70, and each figure against the
// seeds, with tolerances for a busy machine.
func TestCalibrationSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps three servers")
	}
	const speed = 20
	const high = 70
	// 10 requests at C=1 (the seeds' 30 would only take longer: a request
	// at C=1 runs alone either way); 30 at C=70, all in flight at once.
	load := sweepLoad{requests: func(c int) int { return min(3*c+7, 30) }, maxTokens: 512, wall: true}
	measure := func(speed float64) map[string]map[int]float64 {
		got := map[string]map[int]float64{}
		for _, sc := range seedScenarios {
			got[sc.name] = sweepSim(t, sc, speed, []int{1, high}, load)
			t.Logf("%s at %g×: C=1 %.1f tok/s, C=%d %.1f tok/s (simulated)", sc.name, speed, got[sc.name][1], high, got[sc.name][high])
		}
		return got
	}
	got := measure(speed)
	if bad := calibrationMisses(got, high); len(bad) > 0 {
		// A starved client or server only ever reads slower: by the CPU it
		// lacked, and by each late wake-up (a send, a step, a read) against
		// a request a twentieth of a simulated one long. A second
		// measurement at a quarter of the speed asks a quarter of the CPU
		// and gives every wake-up four times the request to be lost in;
		// keeping the faster reading per level, it tells a busy machine
		// from a wrong model.
		t.Logf("remeasuring at %g×, the first sweep missed: %v", speed/4.0, bad)
		again := measure(speed / 4.0)
		for name, levels := range again {
			for c, v := range levels {
				got[name][c] = max(got[name][c], v)
			}
		}
		for _, miss := range calibrationMisses(got, high) {
			t.Error(miss)
		}
	}
}

// calibrationMisses checks sweep figures against the seeds' ratios and
// values, with tolerances for a busy machine, and says what is off.
func calibrationMisses(got map[string]map[int]float64, high int) []string {
	ratio := func(a, b string, c int) float64 { return got[a][c] / got[b][c] }
	checks := []struct {
		what      string
		got, want float64
		tol       float64
	}{
		{"topk4/baseline at C=1", ratio("eagle3-topk4", "baseline", 1), 96.1 / 92.6, 0.15},
		// The spec-v2 run's 86.8 was at 200 tokens; at 512 the model reads
		// 0.5% higher (the prefill weighs less).
		{"topk1v2/baseline at C=1", ratio("eagle3-topk1-specv2", "baseline", 1), 86.8 / 92.6, 0.15},
		{"baseline/topk4 at high C", ratio("baseline", "eagle3-topk4", high), 773.0 / 347, 0.20},
		{"baseline C=1", got["baseline"][1], 92.6, 0.20},
		{"baseline high C", got["baseline"][high], 773, 0.20},
		{"topk4 high C", got["eagle3-topk4"][high], 347, 0.20},
	}
	var out []string
	for _, c := range checks {
		if math.Abs(c.got/c.want-1) > c.tol {
			out = append(out, fmt.Sprintf("%s: %.3f, want %.3f ± %.0f%%", c.what, c.got, c.want, 100*c.tol))
		}
	}
	// The model's reading of the seeds' two C=1 figures (one launch each):
	// EAGLE-3 topk=4 ahead single-stream.
	if got["eagle3-topk4"][1] <= got["baseline"][1] {
		out = append(out, fmt.Sprintf("topk4 should win at C=1: %.1f vs %.1f", got["eagle3-topk4"][1], got["baseline"][1]))
	}
	return out
}

// TestCalibrationTable prints docs/SIM.md's table: every level of the
// seeds' sweep, measured through the server. It takes minutes, so it runs
// only with BAKEOFF_SIM_TABLE=SPEED (e.g. 10); BAKEOFF_SIM_TABLE_ONLY=NAME
// limits it to one scenario.
func TestCalibrationTable(t *testing.T) {
	speed, _ := strconv.ParseFloat(os.Getenv("BAKEOFF_SIM_TABLE"), 64)
	if speed <= 0 {
		t.Skip("set BAKEOFF_SIM_TABLE=SPEED to measure the docs table")
	}
	levels := []int{1, 2, 5, 10, 30, 70, 100, 250}
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario | source |")
	for _, c := range levels {
		fmt.Fprintf(&b, " C=%d |", c)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", len(levels)) + "\n")
	only := os.Getenv("BAKEOFF_SIM_TABLE_ONLY") // one scenario, to remeasure it
	for _, sc := range seedScenarios {
		if only != "" && sc.name != only {
			continue
		}
		m := sweepSim(t, sc, speed, levels, sweepLoad{requests: func(c int) int { return max(30, 4*c) }, maxTokens: 200})
		fmt.Fprintf(&b, "| %s | sweep |", sc.name)
		for _, c := range levels {
			fmt.Fprintf(&b, " %.1f |", m[c])
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "| %s | model |", sc.name)
		for _, c := range levels {
			fmt.Fprintf(&b, " %.1f |", virtual(scenarioConfig(t, sc.name), c).Throughput)
		}
		b.WriteString("\n")
	}
	t.Logf("speed %g×, 200 tokens, ignore_eos, builtin prompts, requests max(30, 4C):\n%s", speed, b.String())
}

// seedRun is the load of one of the seeds' benchmark runs (benchmark_parallel.py:
// Requests per level, every one asking for MaxTokens; a level never has more
// than Requests in flight, whatever its concurrency).
type seedRun struct {
	Name      string
	MaxTokens int
	Requests  int
}

var (
	// parallelRun is the run that found the baseline at 773 tok/s and
	// EAGLE-3 topk=4 at ~340–354 tok/s "at high concurrency (C ≥ 70)": with
	// 30 requests per level, C=70, 100 and 250 all ran 30 requests at once.
	parallelRun = seedRun{"773/354 run: 512 tokens, 30 requests", 512, 30}
	// specV2Run is the EAGLE-3 topk=1 spec-v2 run (warm-up 5, which leaves
	// no state in the model).
	specV2Run = seedRun{"spec-v2 run: 200 tokens, 30 requests", 200, 30}
	// singleStream is the load assumed for the single-stream readings, whose
	// own load the seeds do not give: 200 tokens, as the spec-v2 run, the
	// demo and the default sweep, so that the model reads the seeds'
	// single-stream figures under the load it is mostly run with.
	singleStream = seedRun{"single-stream: 200 tokens (assumed)", 200, 30}
)

// calibFigure is one throughput of the seeds (total output tok/s of a level:
// all its tokens over its makespan) with the run it came from.
type calibFigure struct {
	run      seedRun
	scenario string
	c        int
	tokS     float64
	note     string
}

// fitFigures are what the four fitted costs (StepFixed, PerSeq, PerToken,
// VerifyExtra) are solved from: four figures, four unknowns. The
// single-stream figures come from a separate measurement, one launch each,
// whose load the seeds do not give (see singleStream).
var fitFigures = []calibFigure{
	{singleStream, "baseline", 1, 92.6, "single-stream, one launch"},
	{singleStream, "eagle3-topk4", 1, 96.1, "single-stream, one launch"},
	{parallelRun, "baseline", 70, 773, "C ≥ 70: 30 in flight"},
	{parallelRun, "eagle3-topk4", 70, 347, "C ≥ 70: ~340–354"},
}

// checkFigures are the spec-v2 run's: a configuration (topk 1, 4 draft
// tokens, the spec-v2 path) and a load (200 tokens) the fit did not use. Its
// single-stream figure sets the one cost of the spec-v2 path, SpecV2Sync;
// C=2 and C=5 are then out of sample.
var checkFigures = []calibFigure{
	{specV2Run, "eagle3-topk1-specv2", 1, 86.8, ""},
	{specV2Run, "eagle3-topk1-specv2", 2, 145.5, ""},
	{specV2Run, "eagle3-topk1-specv2", 5, 279.0, ""},
}

// calibSeeds is how many seeded runs (accept lengths differ) a model
// figure averages.
const calibSeeds = 16

// modelFigure is the model's figure for f with costs: the level's tokens
// over its mean makespan in simulated time, without step noise (the
// makespan is then linear in the costs, since the order of events in a
// closed loop does not depend on how long the steps take).
func modelFigure(t *testing.T, costs Costs, f calibFigure) float64 {
	return float64(f.run.Requests*f.run.MaxTokens) / modelMakespan(t, costs, f)
}

func modelMakespan(t *testing.T, costs Costs, f calibFigure) float64 {
	t.Helper()
	cfg := scenarioConfig(t, f.scenario, "--sim-noise", "0")
	perf := NewPerf(cfg)
	perf.costs = costs
	var sum float64
	for seed := range uint64(calibSeeds) {
		r := runVirtual(cfg, perf, ClosedLoop{Concurrency: f.c, Requests: f.run.Requests, MaxTokens: f.run.MaxTokens,
			PromptTokens: calibrationPromptTokens}, seed+1, nil, nil)
		sum += r.Makespan.Seconds()
	}
	return sum / calibSeeds
}

// fitCosts solves the four fitted costs from fitFigures, the others kept:
// each figure's makespan is linear in the costs, so one finite difference
// per cost gives the system exactly.
func fitCosts(t *testing.T, start Costs) Costs {
	t.Helper()
	fields := []*time.Duration{&start.StepFixed, &start.PerSeq, &start.PerToken, &start.VerifyExtra}
	n := len(fields)
	base := make([]float64, n)
	want := make([]float64, n)
	for i, f := range fitFigures {
		base[i] = modelMakespan(t, start, f)
		want[i] = float64(f.run.Requests*f.run.MaxTokens) / f.tokS
	}
	const h = time.Millisecond
	a := make([][]float64, n) // a[i][k]: d makespan_i / d cost_k (s per s)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][n] = want[i] - base[i]
	}
	for k, p := range fields {
		*p += h
		for i, f := range fitFigures {
			a[i][k] = (modelMakespan(t, start, f) - base[i]) / h.Seconds()
		}
		*p -= h
	}
	// Gaussian elimination with partial pivoting.
	for col := range n {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for r := range n {
			if r != col {
				m := a[r][col] / a[col][col]
				for c := col; c <= n; c++ {
					a[r][c] -= m * a[col][c]
				}
			}
		}
	}
	for k, p := range fields {
		*p += time.Duration(a[k][n] / a[k][k] * 1e9)
	}
	return start
}

// fitSpecV2Sync solves the spec-v2 sync cost from one figure of the
// spec-v2 run (its single-stream one), the other costs kept.
func fitSpecV2Sync(t *testing.T, costs Costs, f calibFigure) time.Duration {
	t.Helper()
	costs.SpecV2Sync = 0
	m0 := modelMakespan(t, costs, f)
	costs.SpecV2Sync = time.Millisecond
	slope := (modelMakespan(t, costs, f) - m0) / time.Millisecond.Seconds()
	want := float64(f.run.Requests*f.run.MaxTokens) / f.tokS
	return time.Duration((want - m0) / slope * 1e9)
}

// TestCalibrationOutOfSample fits the model's costs on the 773/354 run and
// checks them on the spec-v2 run: the shipped costs must be the fit's
// result, the fit must reproduce its own figures, and the check figures
// must come out within checkTolerance. -v prints docs/SIM.md's table.
func TestCalibrationOutOfSample(t *testing.T) {
	const (
		costTolerance  = 0.01  // shipped vs refitted cost
		fitTolerance   = 0.005 // fitted model vs its own figures
		checkTolerance = 0.06  // the spec-v2 run, out of sample
	)
	fit := fitCosts(t, fittedCosts)
	fit.SpecV2Sync = fitSpecV2Sync(t, fit, checkFigures[0])
	for _, c := range []struct {
		name        string
		got, fitted time.Duration
	}{
		{"StepFixed", fittedCosts.StepFixed, fit.StepFixed}, {"PerSeq", fittedCosts.PerSeq, fit.PerSeq},
		{"PerToken", fittedCosts.PerToken, fit.PerToken}, {"VerifyExtra", fittedCosts.VerifyExtra, fit.VerifyExtra},
		{"SpecV2Sync", fittedCosts.SpecV2Sync, fit.SpecV2Sync},
	} {
		t.Logf("%s: shipped %v, fit %v", c.name, c.got, c.fitted)
		if math.Abs(float64(c.got)/float64(c.fitted)-1) > costTolerance {
			t.Errorf("%s is %v, the fit gives %v: update fittedCosts", c.name, c.got, c.fitted)
		}
	}
	noSync := fittedCosts
	noSync.SpecV2Sync = 0
	var b strings.Builder
	b.WriteString("| set | run | scenario | C | seeds | model | off by | model without spec-v2 sync | off by |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(set string, f calibFigure, tol float64, withNoSync bool) {
		got := modelFigure(t, fittedCosts, f)
		off := got/f.tokS - 1
		seed := fmt.Sprintf("%.1f", f.tokS)
		if f.note != "" {
			seed += " (" + f.note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %.1f | %+.1f%% |", set, f.run.Name, f.scenario, f.c, seed, got, 100*off)
		if withNoSync {
			ns := modelFigure(t, noSync, f)
			fmt.Fprintf(&b, " %.1f | %+.1f%% |\n", ns, 100*(ns/f.tokS-1))
		} else {
			b.WriteString(" | |\n")
		}
		if math.Abs(off) > tol {
			t.Errorf("%s %s C=%d: model %.1f tok/s, seeds %.1f (%+.1f%%, allowed ±%.1f%%)", set, f.scenario, f.c, got, f.tokS, 100*off, 100*tol)
		}
	}
	for _, f := range fitFigures {
		row("fit", f, fitTolerance, false)
	}
	row("fit (sync)", checkFigures[0], fitTolerance, true)
	for _, f := range checkFigures[1:] {
		row("check", f, checkTolerance, true)
	}
	t.Logf("fit on the 773/354 run, checked on the spec-v2 run (%d seeds per figure, prompts of %d tokens):\n%s",
		calibSeeds, calibrationPromptTokens, b.String())
}
