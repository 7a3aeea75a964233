package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestCDFPlots: every level and metric that some scenario has a CDF of in
// verdict.json gets its plot files, non-empty, with a line named for each
// such scenario and its count as the JSON has it; a level none has gets no
// plot; WriteAll writes them.
func TestCDFPlots(t *testing.T) {
	v, run := testVerdict(t)
	// testVerdict's records keep no gaps: give one scenario an ITL at its
	// first level only.
	first := v.Levels[0]
	l := v.Scenarios[1].Level(first)
	l.ITLCDF = measure.CDFOf([]float64{0.010, 0.011, 0.013, 0.030})
	var page bytes.Buffer
	if err := JSON(&page, v); err != nil {
		t.Fatal(err)
	}
	var back verdict.Verdict
	if err := json.Unmarshal(page.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	plots, err := CDFPlots(v)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, m := range cdfMetrics {
		for _, c := range back.Levels {
			name := CDFPlotName(m.Name, c)
			var lines []string
			for _, s := range back.Scenarios {
				if sl := s.Level(c); sl != nil && m.Of(sl) != nil {
					lines = append(lines, fmt.Sprintf("%s (n=%d)", s.Name, m.Of(sl).N))
				}
			}
			svg, png := plots[name+".svg"], plots[name+".png"]
			if len(lines) == 0 {
				if svg != nil || png != nil {
					t.Errorf("%s drawn with no distribution in verdict.json", name)
				}
				continue
			}
			want += 2
			if len(svg) == 0 || len(png) == 0 {
				t.Errorf("%s: %d bytes of SVG, %d of PNG", name, len(svg), len(png))
				continue
			}
			for _, line := range lines {
				if !bytes.Contains(svg, []byte(line)) {
					t.Errorf("%s.svg has no line %q", name, line)
				}
			}
		}
	}
	if len(plots) != want || plots[CDFPlotName("itl", first)+".svg"] == nil || plots[CDFPlotName("itl", v.Levels[1])+".svg"] != nil {
		t.Errorf("%d CDF plot files, want %d, ITL only at %s", len(plots), want, first)
	}
	if err := WriteAll(run.Dir, v); err != nil {
		t.Fatal(err)
	}
	for name := range plots {
		if fi, err := os.Stat(filepath.Join(run.Dir, Dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("WriteAll: %s: %v", name, err)
		}
	}
}

// TestCDFPlotName: a rate level's name keeps its rate.
func TestCDFPlotName(t *testing.T) {
	if got := CDFPlotName("itl", measure.ConcurrencyLevel(30)); got != "cdf-itl-c30" {
		t.Errorf("got %q", got)
	}
	if got := CDFPlotName("ttft", measure.RateLevel(2.5)); got != "cdf-ttft-r2.5" {
		t.Errorf("got %q", got)
	}
}
