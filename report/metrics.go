package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The verdict's metrics (campaign key verdict.metrics): each is drawn as
// the throughput table is, in its own unit, with a heading that says which
// way is better and the margin of a tie, and one sentence per variant.

// metricVerdictOf is a verdict whose table is mv's: the scenarios and
// levels of v, mv's rows, with the rule's own outcome words back in each
// cell (faster for better), so that the winner column reads the rows as it
// reads throughput's.
func metricVerdictOf(v *verdict.Verdict, mv *verdict.MetricVerdict) *verdict.Verdict {
	pv := &verdict.Verdict{Campaign: v.Campaign, Run: v.Run, Baseline: v.Baseline, Alpha: v.Alpha,
		Confidence: v.Confidence, Correction: mv.Correction, Comparisons: mv.Comparisons,
		EquivalenceMarginPct: mv.MarginPct, Scenarios: v.Scenarios, Levels: v.Levels}
	for _, row := range mv.Rows {
		r := row
		r.Cells = append([]verdict.Cell(nil), row.Cells...)
		for i := range r.Cells {
			switch r.Cells[i].Outcome {
			case verdict.OutcomeBetter:
				r.Cells[i].Outcome = verdict.OutcomeFaster
			case verdict.OutcomeWorse:
				r.Cells[i].Outcome = verdict.OutcomeSlower
			}
		}
		pv.Rows = append(pv.Rows, r)
	}
	return pv
}

// metricHeading is the line above a metric's table: what it is, which way
// is better, and its tie margin.
func metricHeading(mv *verdict.MetricVerdict) string {
	way := "higher is better"
	if mv.Lower {
		way = "lower is better"
	}
	return fmt.Sprintf("%s in %s, %s (a tie within ±%s; Holm over its %d comparisons):",
		mv.Label, mv.Unit, way, trimPct(mv.MarginPct), mv.Comparisons)
}

// writeMetrics writes each of the verdict's metrics: its heading, its table
// fitted to width and a sentence per variant.
func writeMetrics(w io.Writer, v *verdict.Verdict, width int) error {
	for _, mv := range v.Metrics {
		fmt.Fprintln(w)
		for _, l := range fold(metricHeading(mv), foldWidth(width), "", "  ") {
			fmt.Fprintln(w, l)
		}
		s, err := tableTextIn(metricVerdictOf(v, mv), mv.Unit, width)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		for _, line := range append(metricSentences(v, mv), keptOpen(v, mv)...) {
			for _, l := range fold(line, foldWidth(width), "", "  ") {
				if _, err := fmt.Fprintln(w, l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// foldWidth is the width prose is folded to: a terminal's, else
// DefaultWidth.
func foldWidth(width int) int {
	if width <= 0 {
		return DefaultWidth
	}
	return width
}

// metricSentences say, per variant, where it was better, worse or tied in
// the metric against the baseline, with the changes: "ttft_p99: eagle3 is
// better at C=1 (−31.2%) and C=4 (−12.0%), worse at C=16 (+40.1%), tied at
// C=64; undecided at C=2".
func metricSentences(v *verdict.Verdict, mv *verdict.MetricVerdict) []string {
	var out []string
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		groups := map[string][]string{}
		for _, row := range mv.Rows {
			c := mv.Cell(row.Level, s.Name)
			if c == nil || !c.Compared {
				continue
			}
			at := measure.LevelName(row.Level)
			switch c.Outcome {
			case verdict.OutcomeBetter, verdict.OutcomeWorse:
				at += " (" + verdict.Pct(c.DeltaPct) + ")"
			}
			groups[c.Outcome] = append(groups[c.Outcome], at)
		}
		var parts []string
		for _, g := range []struct{ outcome, words string }{
			{verdict.OutcomeBetter, "better at"}, {verdict.OutcomeWorse, "worse at"},
			{verdict.OutcomeTie, "tied at"}, {verdict.OutcomeInconclusive, "undecided at"},
			{verdict.OutcomeDoubted, "doubted at"},
		} {
			if at := groups[g.outcome]; len(at) > 0 {
				parts = append(parts, g.words+" "+joinAnd(at))
			}
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s against %s is %s", mv.Label, s.Name, v.Baseline, strings.Join(parts, "; ")))
	}
	return out
}

// joinAnd joins items as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// keptOpen says, per variant that a sequential plan launched past the
// round its throughput comparisons closed, that this metric kept it
// launching and where the metric stood: the throughput's stop line alone
// would leave its later launches unexplained.
func keptOpen(v *verdict.Verdict, mv *verdict.MetricVerdict) []string {
	if v.Sequential == nil || mv.Sequential == nil {
		return nil
	}
	var out []string
	for _, ms := range mv.Sequential.Variants {
		for _, ts := range v.Sequential.Variants {
			if ts.Variant != ms.Variant || !ts.Stopped {
				continue
			}
			if !ms.Stopped || ms.StoppedAfter > ts.StoppedAfter {
				out = append(out, fmt.Sprintf("%s kept %s launching after its throughput closed at round %d: %s",
					mv.Label, ms.Variant, ts.StoppedAfter, ms.Reason))
			}
		}
	}
	return out
}

// hMetric is one of the verdict's metrics on the page: its section, its
// table and its sentences.
type hMetric struct {
	ID, Title, Intro string
	Table            hTable
	Lines            []string
}

// metricsHTML are the page's sections of the verdict's metrics, each after
// the throughput's table as in the text report.
func metricsHTML(v *verdict.Verdict) []hMetric {
	var out []hMetric
	for _, mv := range v.Metrics {
		id := "metric-" + mv.Metric
		out = append(out, hMetric{ID: id, Title: mv.Label,
			Intro: strings.TrimSuffix(metricHeading(mv), ":") + "; under each variant, its change against " + v.Baseline + ".",
			Table: verdictTableIn(metricVerdictOf(v, mv), tableUnit{id: id + "-table", unit: mv.Unit, field: mv.Metric,
				caption: mv.Label + " (" + mv.Unit + ") at each level; under each variant, its change against " + v.Baseline}),
			Lines: append(metricSentences(v, mv), keptOpen(v, mv)...)})
	}
	return out
}
