package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// TestDoubtedCellGolden: the demo's campaign with the load generator
// pacing baseline-nofusion at C=30 (its client held each freed slot empty
// for a tenth of the request's latency). The cell shows the doubt and its
// reason instead of a change, the winner column decides among the others
// and counts the doubted, and the legend says what "doubted" means. The
// table is a golden file.
func TestDoubtedCellGolden(t *testing.T) {
	v := editedVerdict(t, demoSweep(), demoRounds, 3, demoScenarios(), func(name string, recs []measure.Record) {
		if name != "baseline-nofusion" {
			return
		}
		for i := range recs {
			if r := &recs[i]; r.Level == measure.ConcurrencyLevel(30) && !r.Warmup {
				r.DispatchLagNs = (r.EndNs - r.SendNs) / 10
			}
		}
	})
	got, err := verdictTableText(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"doubted: client set the pace", "(1 doubted)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "doubted: "); n != 1 {
		t.Errorf("%d doubted cells, want 1 (baseline-nofusion at C=30):\n%s", n, got)
	}
	leg := legend(v)
	if !strings.Contains(leg, "doubted: bakeoff's own checks question") {
		t.Errorf("the legend does not say what doubted means: %s", leg)
	}
	golden.Check(t, filepath.Join("testdata", "table-doubted.txt"), []byte(got+leg+"\n"))

	// The page shows the same cell: the badge and why, no change.
	var page bytes.Buffer
	if err := HTML(&page, v); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"outcome-doubted", `class="badge">doubted<`, "client set the pace",
		"not decided: baseline-nofusion: over every launch the client held freed slots empty"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
