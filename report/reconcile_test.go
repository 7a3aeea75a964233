package report

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestCellsReconcile: a cell's bracket is the interval its outcome was
// decided on, and its change is what the legend says it is. A tie's bracket
// is the 90% interval and lies inside ±equivalence_margin, an inconclusive
// level's 90% bracket does not, a win's or loss's bracket (the corrected
// level) excludes no difference on its side; every bracket holds its
// change. The change equals the ratio of the throughputs shown unless the
// cell says "N paired": under a sequential plan a comparison closed before
// the last round is paired over the rounds before its deciding look, while
// the throughputs average every launch. The sequential campaign's table is a
// golden file, with cells of both kinds.
func TestCellsReconcile(t *testing.T) {
	fixed, _ := testVerdict(t)
	seq, err := judge.Run(writeRounds(t, t.TempDir(), 7, 1, "sha256:aaaa", 8),
		verdict.Options{Sequential: &verdict.SequentialPlan{MinRounds: 3, MaxRounds: 8}})
	if err != nil {
		t.Fatal(err)
	}
	seq.Dir = ""
	paired := 0
	for _, tc := range []struct {
		name string
		v    *verdict.Verdict
	}{{"fixed", fixed}, {"sequential", seq}} {
		v := tc.v
		margin := v.EquivalenceMarginPct / 100
		tieConf := 1 - 2*v.Alpha
		for _, row := range v.Rows {
			base := v.Cell(row.Level, v.Baseline)
			for _, c := range row.Cells {
				if !c.Compared {
					continue
				}
				where := fmt.Sprintf("%s %s %s: %s", tc.name, row.Level, c.Scenario, bracketCell(c))
				if !(c.OutcomeLo <= c.Speedup && c.Speedup <= c.OutcomeHi) {
					t.Errorf("%s: the bracket does not hold the change %+.2f%%", where, c.DeltaPct)
				}
				inside := c.OutcomeLo >= 1-margin && c.OutcomeHi <= 1+margin
				switch c.Outcome {
				case verdict.OutcomeTie, verdict.OutcomeInconclusive:
					if math.Abs(c.OutcomeConfidence-tieConf) > 1e-12 || inside != (c.Outcome == verdict.OutcomeTie) {
						t.Errorf("%s: %s, inside ±%s %v", where, c.Outcome, trimPct(v.EquivalenceMarginPct), inside)
					}
				case verdict.OutcomeFaster:
					if c.OutcomeLo <= 1 || c.OutcomeConfidence <= 1-v.Alpha {
						t.Errorf("%s: faster", where)
					}
				case verdict.OutcomeSlower:
					if c.OutcomeHi >= 1 || c.OutcomeConfidence <= 1-v.Alpha {
						t.Errorf("%s: slower", where)
					}
				}
				ratio := c.Throughput.Center / base.Throughput.Center
				switch {
				case c.PairedOnly:
					paired++
					if !strings.Contains(bracketCell(c), fmt.Sprintf(", %d paired", c.Rounds)) {
						t.Errorf("%s: paired over %d rounds, and the cell does not say so", where, c.Rounds)
					}
				case math.Abs(c.Speedup/ratio-1) > 1e-9:
					t.Errorf("%s: change %+.3f%%, the throughputs' ratio %+.3f%%, and the cell does not say it is paired",
						where, c.DeltaPct, 100*(ratio-1))
				}
			}
		}
	}
	if paired == 0 {
		t.Error("no cell of the sequential campaign is paired over fewer rounds than its throughputs")
	}
	got, err := verdictTableText(seq, 0)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "table-sequential.txt"), []byte(got+legend(seq)+"\n"))
}
