package report

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slo"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// gpuRun writes a three-round campaign of engines named names on the small
// sweep, under a TPOT objective of 60 ms, with the GPU counts given.
func gpuRun(t *testing.T, names []string, engines []verdicttest.Engine, counts map[string]int, seed uint64) *results.Run {
	t.Helper()
	s, rounds := smallSweep(), 3
	per := make([][][]measure.Record, len(names))
	for i := range per {
		per[i] = make([][]measure.Record, rounds)
	}
	for _, l := range verdicttest.Campaign(engines, s, rounds, seed) {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("pergpu", "20260101T000000Z", "sha256:aaaa", names[0], s, names...)
	m.Rounds, m.ScenarioGPUs = rounds, counts
	m.SLO = &slo.SLO{Bounds: map[string]float64{slo.TPOT: 0.06}}
	out := make([]verdicttest.Scenario, len(names))
	for i := range names {
		out[i] = verdicttest.Scenario{Name: names[i], Rounds: per[i]}
	}
	run, err := verdicttest.WriteRun(t.TempDir(), m, out)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// tp4Of is a TP4 server beside e on eight GPUs: 55% of its throughput.
func tp4Of(e verdicttest.Engine) verdicttest.Engine {
	e.Slowdown = 1 / 0.55
	return e
}

// TestCapacityPerGPUReport: a run of a TP8 and a TP4 server under an
// objective says, above its capacity sentences, that each capacity has its
// share of one GPU beside it and that the comparison is of the whole
// capacity; each level's SLO line has its goodput per GPU; capacity.csv
// ends with the GPUs, the goodput and the capacity per GPU. The capacity
// section and capacity.csv are golden files.
func TestCapacityPerGPUReport(t *testing.T) {
	v, _ := verdictOf(t, gpuRun(t, []string{"tp8", "tp4"}, []verdicttest.Engine{verdicttest.Baseline, tp4Of(verdicttest.Baseline)},
		map[string]int{"tp8": 8, "tp4": 4}, 5))
	if !v.PerGPU || v.Capacity == nil || len(v.Capacity.Comparisons) != 1 {
		t.Fatalf("fixture: per GPU %v, capacity %+v", v.PerGPU, v.Capacity)
	}
	var text, md, csvOut bytes.Buffer
	if err := Text(&text, v); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, v); err != nil {
		t.Fatal(err)
	}
	if err := CapacityCSV(&csvOut, v); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	i := strings.Index(out, "Capacity under the SLO")
	if i < 0 {
		t.Fatalf("no capacity section:\n%s", out)
	}
	sec := out[i:]
	sec = sec[:strings.Index(sec, "\n\n")+1]
	golden.Check(t, filepath.Join("testdata", "slo-per-gpu.txt"), []byte(sec))
	golden.Check(t, filepath.Join("testdata", "capacity-per-gpu.csv"), csvOut.Bytes())
	for name, out := range map[string]string{"text": out, "Markdown": md.String()} {
		for _, want := range []string{"each capacity has its share of one GPU beside it", "per GPU on 8 GPUs", "per GPU on 4 GPUs"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if n := strings.Count(out, "/GPU)\n"); n < len(v.Levels) {
		t.Errorf("%d SLO lines with a goodput per GPU, want one per level at least", n)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, row := range rows[1:] {
		s := v.Scenario(row[col["scenario"]])
		k, _ := strconv.ParseInt(row[col["level"]], 10, 64)
		var l *verdict.Level
		for i := range s.Levels {
			if s.Levels[i].Level.Key() == k {
				l = &s.Levels[i]
			}
		}
		if l == nil {
			t.Fatalf("row %v: no such level", row)
		}
		g, _ := strconv.Atoi(row[col["gpus"]])
		good, _ := strconv.ParseFloat(row[col["goodput_per_gpu_req_s"]], 64)
		capc, _ := strconv.ParseFloat(row[col["capacity"]], 64)
		capPer, _ := strconv.ParseFloat(row[col["capacity_per_gpu"]], 64)
		if g != s.GPUs || good != l.SLO.GoodputPerGPU || capPer*float64(g) < capc*(1-1e-9) || capPer*float64(g) > capc*(1+1e-9) {
			t.Errorf("row %v: gpus %d, goodput per GPU %g, capacity per GPU %g; want %d, %g, %g/%d", row, g, good, capPer, s.GPUs, l.SLO.GoodputPerGPU, capc, g)
		}
	}
}

// TestDiffPerGPUText: bakeoff diff of a TP8 server against the TP4 that
// replaced it says above its table that the scenario is compared per GPU,
// shows both runs' throughput per GPU beside each throughput and marks each
// change per GPU; the capacity table shows each capacity per GPU beside
// it and compares that. A golden file.
func TestDiffPerGPUText(t *testing.T) {
	old := gpuRun(t, []string{"x"}, []verdicttest.Engine{verdicttest.Baseline}, map[string]int{"x": 8}, 41)
	smaller := gpuRun(t, []string{"x"}, []verdicttest.Engine{tp4Of(verdicttest.Baseline)}, map[string]int{"x": 4}, 42)
	// Three runs of history with no run effect: the rows are judged.
	history := []*results.Run{old}
	for seed := range uint64(2) {
		history = append(history, gpuRun(t, []string{"x"}, []verdicttest.Engine{verdicttest.Baseline}, map[string]int{"x": 8}, 43+seed))
	}
	d, err := rundiff.Compare(old, smaller, rundiff.Options{History: history})
	if err != nil {
		t.Fatal(err)
	}
	d.OldRun, d.NewRun = "old", "new"
	var b bytes.Buffer
	if err := DiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "diff-per-gpu.txt"), b.Bytes())
	out := b.String()
	// The capacity per GPU rose (4.5 users per GPU against more than
	// 3.75), which the old run's bound leaves undecided; on the whole
	// capacity it would read as a regression.
	if c := d.Capacity; c == nil || len(c.Rows) != 1 || !c.Rows[0].PerGPU || c.Rows[0].DeltaPct <= 0 || d.Regressed() {
		t.Errorf("capacity diff %+v, regressed %v: want one row per GPU, higher, no regression", c, d.Regressed())
	}
	for _, want := range []string{d.PerGPULine(), "/GPU)", "% per GPU (", "on 8 GPUs", "on 4 GPUs"} {
		if want == "" || !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
}
