package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestEnergyShown: a run with power readings shows each level's energy in
// the text detail, the Markdown energy table, the CSV and its own plot; a
// run without shows none of them.
func TestEnergyShown(t *testing.T) {
	v, _ := testVerdict(t)
	render := func(v *verdict.Verdict) (text, md string, rows [][]string, plots map[string][]byte) {
		var tb, mb, cb bytes.Buffer
		if err := Text(&tb, v); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&mb, v); err != nil {
			t.Fatal(err)
		}
		if err := CSV(&cb, v); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&cb).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		plots, err = Plots(v)
		if err != nil {
			t.Fatal(err)
		}
		return tb.String(), mb.String(), rows, plots
	}
	text, md, rows, plots := render(v)
	if strings.Contains(text, "J/1k tok") || strings.Contains(md, "J/1k tok") || plots[PlotEnergy+".svg"] != nil {
		t.Errorf("energy shown for a run without power readings")
	}
	col := slices.Index(rows[0], "joules_per_1k_tok")
	if col < 0 || rows[1][col] != "" {
		t.Fatalf("CSV energy column %d: %q", col, rows[1])
	}

	s := v.Scenario("baseline")
	for i := range s.Levels {
		l := &s.Levels[i]
		l.Energy = &verdict.LevelEnergy{
			PowerW:        verdict.Estimate{Center: 1180, Lo: 1170, Hi: 1190, Confidence: 0.95, N: 3},
			JoulesPerKTok: verdict.Estimate{Center: 1500 + float64(i), Lo: 1470, Hi: 1530 + float64(i), Confidence: 0.95, N: 3},
		}
	}
	text, md, rows, plots = render(v)
	if !strings.Contains(text, "J/1k tok (GPU W): 1500 ±2.0% (1180 W)") {
		t.Errorf("text detail lacks the energy:\n%s", text)
	}
	if !strings.Contains(md, "baseline J/1k tok") || !strings.Contains(md, "1500 ±2.0% (1180 W)") {
		t.Errorf("markdown lacks the energy table:\n%s", md)
	}
	found := false
	for _, r := range rows[1:] {
		if r[0] == "baseline" && r[1] == "1" {
			found = r[col] == "1500" && r[col+1] == "1470" && r[slices.Index(rows[0], "power_w")] == "1180"
		}
	}
	if !found {
		t.Errorf("CSV lacks baseline's energy at C=1: %v", rows)
	}
	if len(plots[PlotEnergy+".svg"]) == 0 || len(plots[PlotEnergy+".png"]) == 0 {
		t.Errorf("no energy plot")
	}
}
