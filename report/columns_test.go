package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestColumnsInEveryRenderer: each per-level column, declared once in
// levelColumnsAt, reaches every renderer of each level's figures: its head
// the text detail lines and the HTML detail tables, each of its figures its
// CSV column and its data-field on the page (verdict.md leaves each level's
// figures to those). A column added there needs nothing else.
func TestColumnsInEveryRenderer(t *testing.T) {
	v, _ := testVerdict(t)
	v = withEnergy(v)
	al := 2.3
	for i := range v.Scenarios[1].Levels {
		v.Scenarios[1].Levels[i].AcceptLength = &al
		// The records of testVerdict keep no gaps: give one scenario an ITL.
		v.Scenarios[1].Levels[i].ITL = measure.DistAt([]float64{0.011, 0.012, 0.02}, v.Percentiles)
		// Nor a server timeline: give it the server's batch.
		v.Scenarios[1].Levels[i].Server = &measure.ServerSummary{Scrapes: 10,
			Running: &measure.GaugeStats{Mean: 4.5, P50: 5, Max: 5, Source: "sglang:num_running_reqs"}}
		// Nor GPU counts: give it 4 GPUs, and its throughput per GPU.
		tp := v.Scenarios[1].Levels[i].Throughput
		v.Scenarios[1].Levels[i].ThroughputPerGPU = &verdict.Estimate{Center: tp.Center / 4, Lo: tp.Lo / 4, Hi: tp.Hi / 4, N: tp.N}
	}
	v.Scenarios[1].GPUs = 4
	var text, page, sheet bytes.Buffer
	for _, r := range []struct {
		w      *bytes.Buffer
		render func(*bytes.Buffer, *verdict.Verdict) error
	}{
		{&text, func(b *bytes.Buffer, v *verdict.Verdict) error { return Text(b, v) }},
		{&page, func(b *bytes.Buffer, v *verdict.Verdict) error { return HTML(b, v) }},
		{&sheet, func(b *bytes.Buffer, v *verdict.Verdict) error { return CSV(b, v) }},
	} {
		if err := r.render(r.w, v); err != nil {
			t.Fatal(err)
		}
	}
	// A head may break after each "/" on the page.
	page = *bytes.NewBufferString(strings.ReplaceAll(page.String(), "<wbr>", ""))
	header, err := csv.NewReader(&sheet).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range levelColumnsAt(v.Percentiles) {
		t.Run(c.Head, func(t *testing.T) {
			if c.PerRound {
				if !strings.Contains(page.String(), c.head(1)) {
					t.Errorf("the page lacks the column %q", c.head(1))
				}
			} else {
				for name, out := range map[string]string{"text": text.String(), "HTML": page.String()} {
					if !strings.Contains(out, c.Head) {
						t.Errorf("%s lacks the column %q", name, c.Head)
					}
				}
			}
			for _, f := range c.Figures {
				if f.CSV != "" && !slices.Contains(header, f.CSV) {
					t.Errorf("summary.csv lacks %s", f.CSV)
				}
				if f.Field != "" && !strings.Contains(page.String(), `data-field="`+f.Field+`"`) {
					t.Errorf("the page has no number marked %s", f.Field)
				}
			}
		})
	}
}
