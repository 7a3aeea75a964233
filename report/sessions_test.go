package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// sessionsScenario is a scenario of two user levels of sessions whose later
// turns the prefix cache served, and whose prompt lengths were estimated at
// the second level only.
func sessionsScenario() verdict.Scenario {
	turn := func(n int, p50, p99, prompt float64, cached *float64) measure.TurnSummary {
		return measure.TurnSummary{Turn: n, Requests: 6, OK: 6, TTFT: measure.Dist{P50: p50, P99: p99},
			PromptTokensMean: prompt, CachedShare: cached}
	}
	level := func(c int, lengths string) verdict.Level {
		return verdict.Level{Level: measure.ConcurrencyLevel(c), InputLengths: lengths, Sessions: &measure.SessionSummary{
			Sessions: 6, Completed: 6, TurnsMean: 2, Duration: measure.Dist{P50: 0.41},
			ByTurn: []measure.TurnSummary{turn(1, 0.060, 0.072, 2004, nil), turn(2, 0.0057, 0.009, 2101, new(0.98))}}}
	}
	return verdict.Scenario{Name: "cached", Status: "ok",
		Levels: []verdict.Level{level(1, measure.LengthsExact), level(4, measure.LengthsEstimated)}}
}

// TestTurnTable: the per-turn figures of each level as a grid, the grid
// Markdown and HTML show.
func TestTurnTable(t *testing.T) {
	var b bytes.Buffer
	if err := renderTable(&b, turnTable(sessionsScenario()), nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "turns.txt"), b.Bytes())
	if got := turnTable(verdict.Scenario{Levels: []verdict.Level{{Level: measure.ConcurrencyLevel(1)}}}); len(got.Rows) != 0 {
		t.Errorf("single requests gave turn rows %v", got.Rows)
	}
}

// TestLengthsLine: a scenario says where its prompt lengths were
// estimated, and nothing where they were exact or not asked for.
func TestLengthsLine(t *testing.T) {
	lv := func(c int, lengths string) verdict.Level {
		return verdict.Level{Level: measure.ConcurrencyLevel(c), InputLengths: lengths}
	}
	for _, tt := range []struct {
		name   string
		levels []verdict.Level
		want   string
	}{
		{"none asked", []verdict.Level{lv(1, ""), lv(4, "")}, ""},
		{"exact", []verdict.Level{lv(1, measure.LengthsExact)}, ""},
		{"every level", []verdict.Level{lv(1, measure.LengthsEstimated), lv(4, measure.LengthsEstimated)},
			"prompt lengths estimated (4/3 tokens per word): the engine has no tokenize call"},
		{"some levels", []verdict.Level{lv(1, measure.LengthsExact), lv(4, measure.LengthsEstimated)},
			"prompt lengths estimated (4/3 tokens per word) at C=4: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := lengthsLine(verdict.Scenario{Levels: tt.levels})
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}

// TestSessionsInEveryReport: the text detail and the HTML report each show
// a sessions scenario's figures per turn and say where its prompt lengths
// were estimated.
func TestSessionsInEveryReport(t *testing.T) {
	v := &verdict.Verdict{Campaign: "sessions", Run: "r", Baseline: "cached", Confidence: 0.95, Alpha: 0.05,
		Percentiles: measure.DefaultPercentiles, Scenarios: []verdict.Scenario{sessionsScenario()},
		Levels: []measure.Level{measure.ConcurrencyLevel(1), measure.ConcurrencyLevel(4)}}
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer, *verdict.Verdict) error
		turns string
	}{
		{"text", func(b *bytes.Buffer, v *verdict.Verdict) error { return Text(b, v) }, "TTFT p50 by turn 1: 60 ms | 2: 5.7 ms (98% cached)"},
		{"html", func(b *bytes.Buffer, v *verdict.Verdict) error { return HTML(b, v) }, "<caption>Per turn of the sessions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, v); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{tt.turns, "prompt lengths estimated (4/3 tokens per word) at C=4"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("no %q in\n%s", want, b.String())
				}
			}
		})
	}
}
