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
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/model"
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
func sweepSim(t *testing.T, sc simtest.Scenario, speed float64, levels []int, load sweepLoad) map[int]float64 {
	t.Helper()
	p := startSim(t, sc.Env, sc.Fields("--sim-speed", strconv.FormatFloat(speed, 'g', -1, 64))...)
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
			t.Fatalf("%s C=%d: %v", sc.Name, c, err)
		}
		lv := res.Levels[0]
		if lv.Failed > 0 {
			t.Fatalf("%s C=%d: %d requests failed: %v", sc.Name, c, lv.Failed, lv.FailedByClass)
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
		for _, sc := range simtest.Seeds {
			got[sc.Name] = sweepSim(t, sc, speed, []int{1, high}, load)
			t.Logf("%s at %g×: C=1 %.1f tok/s, C=%d %.1f tok/s (simulated)", sc.Name, speed, got[sc.Name][1], high, got[sc.Name][high])
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
	for _, sc := range simtest.Seeds {
		if only != "" && sc.Name != only {
			continue
		}
		m := sweepSim(t, sc, speed, levels, sweepLoad{requests: func(c int) int { return max(30, 4*c) }, maxTokens: 200})
		fmt.Fprintf(&b, "| %s | sweep |", sc.Name)
		for _, c := range levels {
			fmt.Fprintf(&b, " %.1f |", m[c])
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "| %s | model |", sc.Name)
		for _, c := range levels {
			fmt.Fprintf(&b, " %.1f |", model.RunVirtual(simtest.Config(t, cmdline.ParseArgs, sc.Name), model.ClosedLoop{Concurrency: c, Requests: max(30, 4*c), MaxTokens: 200, PromptTokens: simtest.CalibrationPromptTokens}, 1).Throughput)
		}
		b.WriteString("\n")
	}
	t.Logf("speed %g×, 200 tokens, ignore_eos, builtin prompts, requests max(30, 4C):\n%s", speed, b.String())
}
