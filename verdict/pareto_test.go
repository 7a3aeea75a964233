package verdict

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// paretoLevel is a measured level whose throughput per GPU, over gpus, is
// perGPU and whose median TPOT gives perUser tokens per second per user.
func paretoLevel(c int, gpus, perGPU, perUser float64, doubted bool) Level {
	tok := perGPU * gpus
	l := Level{Level: measure.ConcurrencyLevel(c),
		Launches:   []LaunchLevel{{Round: 1, Throughput: tok}},
		Throughput: Estimate{Center: tok, Lo: tok, Hi: tok, N: 1}}
	l.TPOT = measure.Dist{N: 1, P50: 1 / perUser}
	if doubted {
		l.Doubts = []Doubt{{Kind: DoubtPace}}
	}
	return l
}

// paretoFixture is three scenarios whose frontiers are known by hand
// (tok/s per GPU, tok/s per user):
//
//	a (8 GPUs): C=1 (10, 100)  C=8 (60, 50)  C=64 (120, 10)  C=128 (200, 9) doubted
//	b (4 GPUs): C=1 (12, 100)  C=8 (60, 50)  C=64 (100, 8)
//	c (2 GPUs): C=1 (5, 120)   C=2 (5, 110)  C=8 (7, 30)
//
// Overall: c C=1 (the most per user), b C=1 (a C=1 is as fast per user and
// slower per GPU: dominated), a C=8 and b C=8 (equal on both: a tie keeps
// both), a C=64 (b C=64 is lower on both); a C=128 would dominate a C=64 but
// is doubted, so it is on no frontier. c alone: C=1 and C=8 (C=2 is as fast
// per GPU and slower per user); overall, c C=8 is dominated by a C=8.
func paretoFixture(counts map[string]int) *Verdict {
	g := func(name string) float64 { return float64(max(counts[name], 1)) }
	return &Verdict{Scenarios: []Scenario{
		{Name: "a", Status: results.StatusOK, GPUs: counts["a"], Levels: []Level{
			paretoLevel(1, g("a"), 10, 100, false), paretoLevel(8, g("a"), 60, 50, false),
			paretoLevel(64, g("a"), 120, 10, false), paretoLevel(128, g("a"), 200, 9, true)}},
		{Name: "b", Status: results.StatusOK, GPUs: counts["b"], Levels: []Level{
			paretoLevel(1, g("b"), 12, 100, false), paretoLevel(8, g("b"), 60, 50, false),
			paretoLevel(64, g("b"), 100, 8, false)}},
		{Name: "c", Status: results.StatusOK, GPUs: counts["c"], Levels: []Level{
			paretoLevel(1, g("c"), 5, 120, false), paretoLevel(2, g("c"), 5, 110, false),
			paretoLevel(8, g("c"), 7, 30, false)}},
		{Name: "broken", Status: results.StatusFailed},
	}}
}

// paretoText is the points one per line, for the golden file.
func paretoText(p *Pareto) string {
	var b strings.Builder
	fmt.Fprintf(&b, "per GPU: %v\n", p.PerGPU)
	for _, pt := range p.Points {
		var marks []string
		if pt.Own {
			marks = append(marks, "own")
		}
		if pt.Optimal {
			marks = append(marks, "optimal")
		}
		if pt.Doubted {
			marks = append(marks, "doubted")
		}
		fmt.Fprintf(&b, "%-2s %-6s %6.4g tok/s/GPU %6.4g tok/s/user  %s\n", pt.Scenario, measure.LevelName(pt.Level), pt.TokS, pt.PerUser, strings.Join(marks, " "))
	}
	b.WriteString("optimal, by tok/s per user:\n")
	for _, pt := range p.Optimal() {
		fmt.Fprintf(&b, "  %s %s\n", pt.Scenario, measure.LevelName(pt.Level))
	}
	return b.String()
}

// TestParetoFrontier: the frontiers of the hand-made fixture, point by
// point, against the golden file written by hand from paretoFixture's
// comment, and the same set named here so that an -update cannot bless a
// wrong answer.
func TestParetoFrontier(t *testing.T) {
	p := paretoOf(paretoFixture(map[string]int{"a": 8, "b": 4, "c": 2}))
	if p == nil {
		t.Fatal("no Pareto")
	}
	golden.Check(t, filepath.Join("testdata", "pareto.golden"), []byte(paretoText(p)))
	var optimal, own []string
	for _, pt := range p.Points {
		name := pt.Scenario + " " + measure.LevelName(pt.Level)
		if pt.Optimal {
			optimal = append(optimal, name)
		}
		if pt.Own {
			own = append(own, name)
		}
	}
	if got, want := strings.Join(optimal, ", "), "a C=8, a C=64, b C=1, b C=8, c C=1"; got != want {
		t.Errorf("optimal: %s, want %s", got, want)
	}
	if got, want := strings.Join(own, ", "), "a C=1, a C=8, a C=64, b C=1, b C=8, b C=64, c C=1, c C=8"; got != want {
		t.Errorf("own frontiers: %s, want %s", got, want)
	}
}

// TestParetoUnknownGPUs: with a GPU count unknown (a run written before
// counts were recorded) the points are each server's throughput, said so,
// rather than divided by a guess.
func TestParetoUnknownGPUs(t *testing.T) {
	p := paretoOf(paretoFixture(map[string]int{"a": 8, "b": 4}))
	if p.PerGPU {
		t.Fatal("PerGPU with c's count unknown")
	}
	// a holds 8 GPUs: its throughput per server is 8 times the 60 tok/s
	// per GPU its C=8 has.
	if pt := p.Point("a", measure.ConcurrencyLevel(8)); pt == nil || pt.TokS != 480 {
		t.Errorf("a C=8: %+v, want tok/s 480 (per server)", pt)
	}
}

// TestParetoNone: a run with no level that has both coordinates (no
// request with two tokens) has no Pareto, rather than an empty one.
func TestParetoNone(t *testing.T) {
	v := paretoFixture(nil)
	for i := range v.Scenarios {
		for j := range v.Scenarios[i].Levels {
			v.Scenarios[i].Levels[j].TPOT = measure.Dist{}
		}
	}
	if p := paretoOf(v); p != nil {
		t.Errorf("Pareto %+v, want nil", p)
	}
}
