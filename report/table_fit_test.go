package report

import (
	"cmp"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// demoSweep is `make demo`'s sweep (configs/demo.yaml): its six levels, and
// the sim's 40× speed, whose figures (30157.0 tok/s) are as wide as the
// demo's.
func demoSweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 2, 5, 10, 30, 70}
	s.Warmup = 2
	s.Speed = 40
	return s
}

// demoRounds is configs/demo.yaml's rounds.
const demoRounds = 4

// fixtureScenario is one scenario of a simulated campaign.
type fixtureScenario struct {
	name   string
	engine verdicttest.Engine
}

// demoScenarios are `make demo`'s four scenarios under their names: the
// baseline, the baseline again with one flag that changes nothing, EAGLE-3
// topk 4, and an EAGLE-3 between the two. Their launches vary by 2.5%, as
// the demo's do on a small shared machine, so that some levels stay
// inconclusive: those cells are the widest.
func demoScenarios() []fixtureScenario {
	noisy := func(e verdicttest.Engine) verdicttest.Engine {
		e = verdicttest.RealisticNoise(e)
		e.LaunchSigma = 0.025
		return e
	}
	specv2 := verdicttest.Eagle3TopK4
	specv2.StepPerSeq, specv2.AcceptLength = 0.004, 2.0
	return []fixtureScenario{
		{"baseline", noisy(verdicttest.Baseline)},
		{"baseline-nofusion", noisy(verdicttest.Baseline)},
		{"eagle3-topk4", noisy(verdicttest.Eagle3TopK4)},
		{"eagle3-topk1-specv2", noisy(specv2)},
	}
}

// eightVariants is a baseline and eight variants, with names as long as
// real scenario files have, some as fast as the baseline, some slower.
func eightVariants() []fixtureScenario {
	out := demoScenarios()
	b := out[0].engine
	for i, name := range []string{"chunked-prefill-8192", "fp8-kv-cache", "cuda-graph-max-bs-160", "ngram-speculative", "schedule-policy-lpm"} {
		e := b
		e.Slowdown = 1 + 0.03*float64(i%3)
		out = append(out, fixtureScenario{name, e})
	}
	return out
}

// simulatedVerdict runs a campaign of the scenarios (the first is the
// baseline) for rounds rounds and computes its verdict.
func simulatedVerdict(t *testing.T, s verdicttest.Sweep, rounds int, seed uint64, scs []fixtureScenario) *verdict.Verdict {
	t.Helper()
	return editedVerdict(t, s, rounds, seed, scs, nil)
}

// editedVerdict is simulatedVerdict with edit, when not nil, applied to
// each launch's records (scenario name and records) before they are
// written.
func editedVerdict(t *testing.T, s verdicttest.Sweep, rounds int, seed uint64, scs []fixtureScenario, edit func(string, []measure.Record)) *verdict.Verdict {
	t.Helper()
	return campaignVerdict(t, s, rounds, seed, scs, edit, nil)
}

// campaignVerdict is editedVerdict with the run's manifest edited by
// manifest, when not nil, before the run is written.
func campaignVerdict(t *testing.T, s verdicttest.Sweep, rounds int, seed uint64, scs []fixtureScenario, edit func(string, []measure.Record), manifest func(*results.Manifest)) *verdict.Verdict {
	t.Helper()
	engines := make([]verdicttest.Engine, len(scs))
	names := make([]string, len(scs))
	for i, sc := range scs {
		engines[i], names[i] = sc.engine, sc.name
	}
	per := make([][][]measure.Record, len(scs))
	for i := range per {
		per[i] = make([][]measure.Record, rounds)
	}
	for _, l := range verdicttest.Campaign(engines, s, rounds, seed) {
		if edit != nil {
			edit(names[l.Scenario], l.Records)
		}
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("demo", "20260101T000000Z", "sha256:aaaa", names[0], s, names...)
	m.Rounds = rounds
	if manifest != nil {
		manifest(&m)
	}
	out := make([]verdicttest.Scenario, len(scs))
	for i := range scs {
		out[i] = verdicttest.Scenario{Name: names[i], Rounds: per[i]}
	}
	run, err := verdicttest.WriteRun(t.TempDir(), m, out)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := verdictOf(t, run)
	return v
}

// TestVerdictTableFits: the text verdict table fits the terminal. Two
// scenarios fit side by side on one line per level; the demo's four fit in
// the default 120 columns with each change under its throughput; a baseline
// with eight variants fits neither, and takes the block layout; each
// layout gives way to the next on a narrower terminal, once an undecided
// level's winner cell counts who else can be the best rather than naming
// them. The demo's table and
// the blocks of eight variants, at the default width, are golden files.
func TestVerdictTableFits(t *testing.T) {
	four := simulatedVerdict(t, demoSweep(), demoRounds, 3, demoScenarios())
	eight := simulatedVerdict(t, demoSweep(), demoRounds, 3, eightVariants())
	two := simulatedVerdict(t, demoSweep(), demoRounds, 3, demoScenarios()[2:])
	three, _ := testVerdict(t)
	for _, tc := range []struct {
		name   string
		v      *verdict.Verdict
		width  int
		layout string
		golden string
	}{
		{"four scenarios", four, 0, "stacked", "table-four-scenarios.txt"},
		{"eight variants", eight, 0, "blocks", "table-eight-variants.txt"},
		{"two scenarios", two, 0, "one line", ""},
		{"four scenarios, 270 columns", four, 270, "one line", ""},
		{"four scenarios, 100 columns", four, 100, "blocks", ""},
		// Naming both who can still win at C=30 takes 83 columns: counting
		// them keeps the stacked layout in 80.
		{"three scenarios, 80 columns", three, 80, "stacked", ""},
		{"four scenarios, 80 columns", four, 80, "blocks", ""},
		{"eight variants, 80 columns", eight, 80, "blocks", ""},
		{"eight variants, 250 columns", eight, 250, "stacked", ""},
		{"eight variants, 610 columns", eight, 610, "one line", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := verdictTableText(tc.v, tc.width)
			if err != nil {
				t.Fatal(err)
			}
			limit := tc.width
			if limit == 0 {
				limit = DefaultWidth
			}
			if w := widest(got); w > limit {
				t.Errorf("the widest line is %d columns, more than %d:\n%s", w, limit, got)
			}
			if layout := layoutOf(got); layout != tc.layout {
				t.Errorf("layout %s, want %s:\n%s", layout, tc.layout, got)
			}
			for _, row := range tc.v.Rows {
				if !hasWinnerCell(got, row, tc.v.Baseline) {
					t.Errorf("the winner cell %q is not in the table", winnerCell(row, tc.v.Baseline))
				}
			}
			if tc.golden != "" {
				golden.Check(t, filepath.Join("testdata", tc.golden), []byte(got))
			}
		})
	}
}

// hasWinnerCell reports whether a drawn table shows the row's winner cell,
// named or counted, on one line or, in the stacked layout, as its lines
// one under the other.
func hasWinnerCell(table string, row verdict.Row, baseline string) bool {
	lines := strings.Split(table, "\n")
	for _, named := range []bool{true, false} {
		if strings.Contains(table, winnerCellAs(row, baseline, named)) {
			return true
		}
		want := strings.Split(winnerLines(row, baseline, named), "\n")
		for i := 0; i+len(want) <= len(lines); i++ {
			all := true
			for j, w := range want {
				all = all && strings.HasSuffix(strings.TrimSuffix(lines[i+j], "│"), " "+w+" ")
			}
			if all {
				return true
			}
		}
	}
	return false
}

// layoutOf tells which layout a drawn verdict table has.
func layoutOf(table string) string {
	switch {
	case strings.Contains(table, " against "):
		return "blocks"
	case strings.Contains(table, "tok/s, vs "):
		return "stacked"
	}
	return "one line"
}

// TestWinnerCell: the winner column names the winner, says the leaders
// tie, or says what an undecided row decided all the same: who can still be
// the best, the leader first, and how many are decided behind, by the
// leader's own comparisons or by the baseline's; "none decided" only where
// nobody is behind. On a busy host the A/A pair stayed "?" at every level
// while both speculative variants lost to either by 40%, and every level
// read "none decided".
func TestWinnerCell(t *testing.T) {
	// cell is a scenario measured at the level; a variant's outcome is
	// against the baseline ("" for the baseline itself).
	cell := func(name, outcome string) verdict.Cell {
		return verdict.Cell{Scenario: name, Present: true, Compared: outcome != "", Comparison: verdict.Comparison{Outcome: outcome}}
	}
	const (
		faster, slower, tie, open = verdict.OutcomeFaster, verdict.OutcomeSlower, verdict.OutcomeTie, verdict.OutcomeInconclusive
	)
	undecided := func(unresolved []string, cells ...verdict.Cell) verdict.Row {
		return verdict.Row{Outcome: verdict.RowInconclusive, Unresolved: unresolved, Cells: cells}
	}
	busy := undecided([]string{"baseline-nofusion", "baseline"},
		cell("baseline", ""), cell("baseline-nofusion", open), cell("eagle3-topk4", slower), cell("eagle3-topk1-specv2", slower))
	doubted := busy
	doubted.Doubted = []string{"eagle3-topk1-specv2"}
	doubted.Cells = slices.Clone(busy.Cells)
	doubted.Cells[3].Outcome = verdict.OutcomeDoubted
	for _, tc := range []struct {
		name    string
		row     verdict.Row
		want    string
		lines   string // the stacked layout's, when not the phrases one a line
		counted string // counting who else can be the best, when it differs
	}{
		{"a winner", verdict.Row{Outcome: verdict.RowWinner, Winner: "eagle3-topk4"}, "eagle3-topk4", "", ""},
		{"a tie", verdict.Row{Outcome: verdict.RowTie, Tied: []string{"baseline", "baseline-nofusion"}}, "2-way tie", "", ""},
		{"fewer than two measured", verdict.Row{}, "-", "", ""},
		{"all doubted", verdict.Row{Doubted: []string{"a", "b"}}, "doubted", "", ""},
		{"nothing decided", undecided([]string{"a", "baseline"}, cell("baseline", ""), cell("a", open)), "none decided", "", ""},
		{"the A/A pair open, both speculative variants behind", busy,
			"baseline-nofusion or baseline, 2 behind", "baseline-nofusion\nor baseline\n2 behind", "baseline-nofusion or 1 other, 2 behind"},
		{"three can still be the best", undecided([]string{"c", "baseline", "a"},
			cell("baseline", ""), cell("a", open), cell("b", slower), cell("c", open)), "c or 2 others, 1 behind", "", ""},
		// The leader c cannot be told from b, but the baseline beat b.
		{"behind the baseline while open against the leader", undecided([]string{"c", "baseline", "b"},
			cell("baseline", ""), cell("b", slower), cell("c", open)), "c or baseline, 1 behind", "", "c or 1 other, 1 behind"},
		// The leader a ties the baseline, and b, open against a, lost to
		// the baseline: the two left tie.
		{"the two left tie", undecided([]string{"a", "baseline", "b"},
			cell("baseline", ""), cell("a", tie), cell("b", slower)), "2-way tie, 1 behind", "", ""},
		{"a variant beat the baseline", undecided([]string{"a", "b", "baseline"},
			cell("baseline", ""), cell("a", open), cell("b", faster)), "a or b, 1 behind", "", "a or 1 other, 1 behind"},
		// c beat b (the leader's comparison) and b beat the baseline: c is
		// the best, though its own comparison with the baseline is open.
		{"left alone on top through two steps", undecided([]string{"c", "baseline"},
			cell("baseline", ""), cell("b", faster), cell("c", open)), "c, 2 behind", "", ""},
		// The leader lost to the baseline and the baseline to b, whom the
		// leader beat: one decision is an error, and the row's reading stands.
		{"decisions that contradict", undecided([]string{"c", "baseline"},
			cell("baseline", ""), cell("b", faster), cell("c", slower)), "c or baseline, 1 behind", "", "c or 1 other, 1 behind"},
		{"a tie and nobody behind", undecided([]string{"a", "baseline", "b"},
			cell("baseline", ""), cell("a", tie), cell("b", open)), "none ahead, 1 tie", "", ""},
		{"the doubted are counted after", doubted, "baseline-nofusion or baseline, 1 behind (1 doubted)", "",
			"baseline-nofusion or 1 other, 1 behind (1 doubted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := winnerCell(tc.row, "baseline"); got != tc.want {
				t.Errorf("winnerCell = %q, want %q", got, tc.want)
			}
			if tc.lines != "" {
				if got := winnerLines(tc.row, "baseline", true); got != tc.lines {
					t.Errorf("winnerLines = %q, want %q", got, tc.lines)
				}
			}
			if want := cmp.Or(tc.counted, tc.want); winnerCellAs(tc.row, "baseline", false) != want {
				t.Errorf("counted: %q, want %q", winnerCellAs(tc.row, "baseline", false), want)
			}
		})
	}
}

// TestTextWidth: the whole report's table follows the width it is given.
func TestTextWidth(t *testing.T) {
	v := simulatedVerdict(t, demoSweep(), 2, 3, demoScenarios())
	for _, width := range []int{80, 120} {
		var b strings.Builder
		if err := TextWidth(&b, v, width); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.ContainsAny(line[:min(len(line), 3)], "┌│└├") && widest(line) > width {
				t.Errorf("width %d: a table line of %d columns:\n%s", width, widest(line), line)
			}
		}
	}
}

// TestTwoRoundsEightVariants: two rounds give one degree of freedom, and
// Holm over the 48 comparisons of eight variants at six levels asks for a
// t quantile in the hundreds, so the MDEs are not estimable (10³⁸% and
// more). The table says so as a bound ("MDE > 100%") and keeps to 120
// columns; nothing the text report prints is a number of more than 8
// digits. The table is a golden file.
func TestTwoRoundsEightVariants(t *testing.T) {
	v := simulatedVerdict(t, demoSweep(), 2, 3, eightVariants())
	huge := false
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			huge = huge || c.Compared && c.MDEPct > 1e6
		}
	}
	if !huge {
		t.Fatalf("the fixture no longer has an MDE past 10⁶%%: the test shows nothing")
	}
	table, err := verdictTableText(v, 120)
	if err != nil {
		t.Fatal(err)
	}
	if w := widest(table); w > 120 {
		t.Errorf("the widest line is %d columns:\n%s", w, table)
	}
	if !strings.Contains(table, "MDE > 100%") {
		t.Errorf("no cell says the MDE is past 100%%:\n%s", table)
	}
	golden.Check(t, filepath.Join("testdata", "table-two-rounds-eight-variants.txt"), []byte(table))
	var whole strings.Builder
	if err := TextWidth(&whole, v, 120); err != nil {
		t.Fatal(err)
	}
	if long := longNumber.FindAllString(whole.String(), 5); len(long) > 0 {
		t.Errorf("numbers of more than 8 digits: %q\n%s", long, whole.String())
	}
}

// longNumber is a run of more than 8 digits, decimals included.
var longNumber = regexp.MustCompile(`\d(?:\.?\d){8,}`)
