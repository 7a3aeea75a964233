package report

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestPlotsEdgeCases: a run with one level, one with a lone scenario, one
// where every scenario failed, and runs with interrupted scenarios or levels
// where nothing succeeded still give every plot, without a panic; a scenario
// with nothing to plot is named in the legend with the reason.
func TestPlotsEdgeCases(t *testing.T) {
	one := verdicttest.DefaultSweep()
	one.Concurrency = []int{4}
	// Every request failed: levels whose throughput and latency are zero.
	allFailed := verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 3)
	for i := range allFailed {
		allFailed[i].Status, allFailed[i].ErrClass, allFailed[i].Error = 500, measure.ErrHTTP, "overloaded"
		allFailed[i].Tokens, allFailed[i].FirstNs = 0, 0
	}
	// A record of level 0 that is not marked warm-up: a log axis cannot show it.
	levelZero := verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 4)
	for i := range levelZero {
		levelZero[i].Level, levelZero[i].Warmup = measure.ConcurrencyLevel(0), false
	}
	for _, tc := range []struct {
		name      string
		scenarios []verdicttest.Scenario
		// legend holds text each SVG plot must contain.
		legend []string
	}{
		{"one level", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 2)}}, nil},
		{"baseline alone", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}},
			[]string{"variant: not plotted (failed)"}},
		{"everything failed", []verdicttest.Scenario{
			{Name: "baseline", Status: results.StatusFailed, Reason: "died"},
			{Name: "variant", Status: results.StatusFailed, Reason: "died"}}, nil},
		{"interrupted before any level", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusPending}},
			[]string{"variant: not plotted (not finished)"}},
		{"every request failed", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Records: allFailed}},
			[]string{"variant: not plotted"}},
		{"level zero", []verdicttest.Scenario{
			{Name: "baseline", Records: verdicttest.Simulate(verdicttest.Baseline, one, 1)},
			{Name: "variant", Status: results.StatusPending, Records: levelZero}},
			[]string{"variant: not plotted (not finished)"}},
		{"baseline interrupted", []verdicttest.Scenario{
			{Name: "baseline", Status: results.StatusPending},
			{Name: "variant", Records: verdicttest.Simulate(verdicttest.Eagle3TopK4, one, 2)}},
			[]string{"baseline: not plotted (not finished)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := verdicttest.Manifest("edge", "r", "sha256:ee", "baseline", one, "baseline", "variant")
			run, err := verdicttest.WriteRun(filepath.Join(dir, "run"), m, tc.scenarios)
			if err != nil {
				t.Fatal(err)
			}
			v, err := judge.Run(run, verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteAll(run.Dir, v); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{PlotThroughput, PlotLatencyP99} {
				svg, err := os.ReadFile(filepath.Join(run.Dir, Dir, name+".svg"))
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range tc.legend {
					if !bytes.Contains(svg, []byte(want)) {
						t.Errorf("%s.svg does not say %q", name, want)
					}
				}
			}
		})
	}
}

// TestPlotsGolden: what each plot of two runs shows a reader, as text: its
// title, each axis's label, range and tick labels, and each legend entry
// with its colour and line style. The golden file is where a change to
// the ticks (no "1250.00"), the ranges (the CDF ending near its p99.9) or a
// scenario's colour is seen and reviewed.
func TestPlotsGolden(t *testing.T) {
	why, _ := verdictOf(t, whyRun(t, 41, 2.3))
	demo := withEnergy(simulatedVerdict(t, demoSweep(), demoRounds, 3, demoScenarios()))
	var b strings.Builder
	for _, v := range []*verdict.Verdict{demo, why} {
		for _, pb := range plotBuilders(v) {
			c, err := pb.build(v)
			if err != nil {
				t.Fatal(err)
			}
			describeChart(&b, pb.name, c)
		}
		levels, err := levelCharts(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, lc := range levels {
			describeChart(&b, lc.name, lc.c)
		}
	}
	golden.Check(t, filepath.Join("testdata", "plots.txt"), []byte(b.String()))
}

// levelChart is one of a level's charts, by its plot name.
type levelChart struct {
	name string
	c    *chart
}

// levelCharts are the charts levelPlotsHTML draws, undrawn.
func levelCharts(v *verdict.Verdict) ([]levelChart, error) {
	var out []levelChart
	for _, lv := range v.Levels {
		for _, m := range cdfMetrics {
			c, ok, err := cdfPlot(v, m, lv)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, levelChart{CDFPlotName(m.Name, lv), c})
			}
		}
		for _, s := range v.Scenarios {
			if l := s.Level(lv); l != nil && l.Timeline != nil && len(l.Timeline.Series) > 0 {
				c, err := timelinePlot(v, s.Name, l)
				if err != nil {
					return nil, err
				}
				out = append(out, levelChart{TimelinePlotName(s.Name, lv), c})
			}
		}
	}
	return out, nil
}

// describeChart writes what c shows: title, axes and legend.
func describeChart(b *strings.Builder, name string, c *chart) {
	fmt.Fprintf(b, "%s: %s\n", name, c.title)
	for _, a := range []struct {
		name string
		ax   *plot.Axis
	}{{"x", &c.p.X}, {"y", &c.p.Y}} {
		var ticks []string
		if a.ax.Max > a.ax.Min {
			for _, tk := range a.ax.Tick.Marker.Ticks(a.ax.Min, a.ax.Max) {
				if tk.Label != "" && tk.Value >= a.ax.Min && tk.Value <= a.ax.Max {
					ticks = append(ticks, tk.Label)
				}
			}
		}
		fmt.Fprintf(b, "  %s %s: %.4g to %.4g, ticks %s\n", a.name, a.ax.Label.Text, a.ax.Min, a.ax.Max, strings.Join(ticks, " "))
	}
	for _, e := range c.legend {
		var styles []string
		for _, th := range e.thumbs {
			styles = append(styles, thumbStyle(th))
		}
		fmt.Fprintf(b, "  legend %q %s\n", e.label, strings.Join(styles, " + "))
	}
}

// thumbStyle is how a legend's swatch is drawn: colour, and line style.
func thumbStyle(th plot.Thumbnailer) string {
	line := func(l draw.LineStyle) string {
		s := colorText(l.Color)
		if len(l.Dashes) > 0 {
			var d []string
			for _, x := range l.Dashes {
				d = append(d, fmt.Sprintf("%g", x.Points()))
			}
			return s + " dashes " + strings.Join(d, ",")
		}
		return s + " solid"
	}
	switch x := th.(type) {
	case *plotter.Line:
		return "line " + line(x.LineStyle)
	case *plotter.Scatter:
		return fmt.Sprintf("marker %s %T", colorText(x.GlyphStyle.Color), x.GlyphStyle.Shape)
	case *plotter.Function:
		return "line " + line(x.LineStyle)
	case *vBand:
		if x.lo == x.hi {
			return "vertical line " + line(x.LineStyle)
		}
		return "band " + colorText(x.Color)
	}
	return fmt.Sprintf("%T", th)
}

// colorText is a colour as #rrggbb, with its alpha when not opaque.
func colorText(c color.Color) string {
	if c == nil {
		return "none"
	}
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	if n.A == 0xff {
		return hexColor(n)
	}
	return fmt.Sprintf("%s/%02x", hexColor(n), n.A)
}

// TestPlotSVGText: every text of every plot SVG carries the width it was
// laid out at and names the metric-compatible family list, so that no
// viewer's fonts move it (plotFontFamily); no Liberation family is asked
// for alone, and every legend text says the room it was given.
func TestPlotSVGText(t *testing.T) {
	why, _ := verdictOf(t, whyRun(t, 41, 2.3))
	plots, err := Plots(why)
	if err != nil {
		t.Fatal(err)
	}
	cdfs, err := CDFPlots(why)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(plots, cdfs)
	for name, data := range plots {
		if !strings.HasSuffix(name, ".svg") {
			continue
		}
		svg := string(data)
		texts := strings.Count(svg, "<text ")
		if texts == 0 || strings.Count(svg, `lengthAdjust="spacingAndGlyphs"`) != texts {
			t.Errorf("%s: %d texts, %d with their laid-out width", name, texts, strings.Count(svg, "lengthAdjust="))
		}
		if n := strings.Count(svg, "font-family:"+plotFontFamily+";"); n != texts {
			t.Errorf("%s: %d of %d texts name the family list", name, n, texts)
		}
		for _, bad := range []string{"font-family:Liberation"} {
			if strings.Contains(svg, bad) {
				t.Errorf("%s asks for %q", name, bad)
			}
		}
		if n := strings.Count(svg, `class="legend"`); n == 0 || strings.Count(svg, "data-box=") != n {
			t.Errorf("%s: %d legend texts, %d with their room", name, n, strings.Count(svg, "data-box="))
		}
	}
}
