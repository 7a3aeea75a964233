package report

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// perGPUReportVerdict is a TP8 server (8 GPUs) against one TP4 server (4
// GPUs, 55% of the TP8's throughput: 10% more per GPU) and two TP4
// replicas (8 GPUs; one server whose step grows half as fast with the
// batch), run as the demo's sweep: a run compared per GPU.
func perGPUReportVerdict(t *testing.T) *verdict.Verdict {
	t.Helper()
	tp4 := verdicttest.Baseline
	tp4.Slowdown = 1 / 0.55
	tp4x2 := tp4
	tp4x2.StepPerSeq /= 2
	names := []string{"tp8", "tp4", "tp4x2"}
	s, rounds := demoSweep(), 3
	per := make([][][]measure.Record, len(names))
	for i := range per {
		per[i] = make([][]measure.Record, rounds)
	}
	for _, l := range verdicttest.Campaign([]verdicttest.Engine{verdicttest.Baseline, tp4, tp4x2}, s, rounds, 5) {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("pergpu", "20260101T000000Z", "sha256:aaaa", names[0], s, names...)
	m.Rounds, m.ScenarioGPUs = rounds, map[string]int{"tp8": 8, "tp4": 4, "tp4x2": 8}
	out := make([]verdicttest.Scenario, len(names))
	for i := range names {
		out[i] = verdicttest.Scenario{Name: names[i], Rounds: per[i]}
	}
	run, err := verdicttest.WriteRun(t.TempDir(), m, out)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := verdictOf(t, run)
	if !v.PerGPU || v.Pareto == nil || !v.Pareto.PerGPU {
		t.Fatalf("fixture: per GPU %v, Pareto %+v; want both per GPU", v.PerGPU, v.Pareto)
	}
	return v
}

// TestPerGPUTable: a run compared per GPU says so above its table, in the
// terminal, in Markdown and on the page, and shows each throughput's share
// of one GPU beside it; the terminal's table is a golden file. A run of
// equal counts shows neither (the other golden files, unchanged).
func TestPerGPUTable(t *testing.T) {
	v := perGPUReportVerdict(t)
	var text, md, page bytes.Buffer
	if err := writeVerdictTable(&text, v, DefaultWidth); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "table-per-gpu.txt"), text.Bytes())
	if err := Markdown(&md, v); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, v); err != nil {
		t.Fatal(err)
	}
	line := "per GPU: tp8 8 GPUs, tp4 4 GPUs, tp4x2 8 GPUs; each change and winner is of throughput per GPU"
	for name, out := range map[string]string{"text": text.String(), "Markdown": md.String(), "HTML": page.String()} {
		if !strings.Contains(out, line) {
			t.Errorf("%s does not say %q", name, line)
		}
	}
	if n := strings.Count(text.String(), "/GPU)"); n != 3*len(v.Levels) {
		t.Errorf("%d throughputs per GPU in the table, want %d", n, 3*len(v.Levels))
	}
	if n := strings.Count(page.String(), `data-field="`+fieldThroughputPerGPU+`"`); n != 3*len(v.Levels) {
		t.Errorf("%d throughputs per GPU marked on the page, want %d", n, 3*len(v.Levels))
	}
}

// TestParetoCSV: summary.csv's last columns are each scenario's GPUs, each
// level's throughput per GPU and tokens per second per user, exactly as
// verdict.json has them, and whether it is Pareto-optimal: as many rows as
// the verdict has optimal points, and the same ones.
func TestParetoCSV(t *testing.T) {
	v := perGPUReportVerdict(t)
	var buf bytes.Buffer
	if err := CSV(&buf, v); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if got := rows[0][len(rows[0])-len(csvPareto):]; strings.Join(got, ",") != "gpus,throughput_per_gpu_tok_s,tok_s_per_user,pareto_optimal" {
		t.Fatalf("last columns %v", got)
	}
	optimal := 0
	for _, row := range rows[1:] {
		c, _ := strconv.Atoi(row[col["level"]])
		lv := measure.ConcurrencyLevel(c)
		s := v.Scenario(row[col["scenario"]])
		l := s.Level(lv)
		perUser, _ := l.PerUser()
		want := map[string]string{
			"gpus":                     strconv.Itoa(s.GPUs),
			"throughput_per_gpu_tok_s": strconv.FormatFloat(l.ThroughputPerGPU.Center, 'g', -1, 64),
			"tok_s_per_user":           strconv.FormatFloat(perUser, 'g', -1, 64),
			"pareto_optimal":           strconv.FormatBool(v.Pareto.Point(s.Name, lv).Optimal),
		}
		for k, w := range want {
			if row[col[k]] != w {
				t.Errorf("%s C=%d %s: %q, want %q", s.Name, c, k, row[col[k]], w)
			}
		}
		if row[col["pareto_optimal"]] == "true" {
			optimal++
		}
	}
	if n := len(v.Pareto.Optimal()); optimal != n || n == 0 {
		t.Errorf("%d rows Pareto-optimal, the verdict has %d", optimal, n)
	}
}

// TestParetoCSVUnknownGPUs: a run that does not record GPU counts leaves
// gpus and the throughput per GPU empty, never 0 or a guess.
func TestParetoCSVUnknownGPUs(t *testing.T) {
	v, _ := testVerdict(t)
	var buf bytes.Buffer
	if err := CSV(&buf, v); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := len(rows[0])
	for _, row := range rows[1:] {
		if row[n-4] != "" || row[n-3] != "" || row[n-2] == "" {
			t.Errorf("%v: gpus %q, per GPU %q, per user %q; want empty, empty, a figure", row[:2], row[n-4], row[n-3], row[n-2])
		}
	}
}

// TestParetoHTML: the page has the Pareto plot among its plots and a
// section listing every Pareto-optimal point, the most tokens per second
// per user first, each with its scenario, level and both coordinates.
func TestParetoHTML(t *testing.T) {
	v := perGPUReportVerdict(t)
	var buf bytes.Buffer
	if err := HTML(&buf, v); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `<figure id="plot-`+PlotPareto+`" data-plot="`+PlotPareto+`">`) {
		t.Error("the page has no Pareto plot")
	}
	sec := page[strings.Index(page, `<section id="pareto">`):]
	sec = sec[:strings.Index(sec, "</section>")]
	rows := regexp.MustCompile(`(?s)<tr data-level="(\d+)">.*?</tr>`).FindAllStringSubmatch(sec, -1)
	opt := v.Pareto.Optimal()
	if len(rows) != len(opt) {
		t.Fatalf("%d rows listed, %d optimal points", len(rows), len(opt))
	}
	for i, r := range rows {
		pt := opt[len(opt)-1-i]
		for _, want := range []string{
			`data-scenario="` + pt.Scenario + `"`,
			`data-field="` + fieldParetoTokS + `" data-scenario="` + pt.Scenario + `" data-level="` + strconv.Itoa(dataLevel(pt.Level)) + `" data-value="` + strconv.FormatFloat(pt.TokS, 'g', -1, 64) + `"`,
			`data-field="` + fieldParetoPerUser + `" data-scenario="` + pt.Scenario + `" data-level="` + strconv.Itoa(dataLevel(pt.Level)) + `" data-value="` + strconv.FormatFloat(pt.PerUser, 'g', -1, 64) + `"`,
		} {
			if !strings.Contains(r[0], want) {
				t.Errorf("row %d (%s %s) lacks %s", i, pt.Scenario, measure.LevelName(pt.Level), want)
			}
		}
	}
	plots, err := Plots(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"png", "svg"} {
		if len(plots[PlotPareto+"."+ext]) == 0 {
			t.Errorf("no %s.%s", PlotPareto, ext)
		}
	}
}

// TestParetoPlot: what the Pareto plot shows a reader: its axes say per GPU
// and per user (1 / median TPOT), from 0 past the farthest point, and its
// legend names the overall frontier and every scenario.
func TestParetoPlot(t *testing.T) {
	v := perGPUReportVerdict(t)
	c, err := paretoPlot(v)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	describeChart(&b, PlotPareto, c)
	got := b.String()
	for _, want := range []string{"y output tok/s per GPU: 0 to", "x output tok/s per user (1 / median TPOT): 0 to",
		`legend "Pareto frontier, all scenarios"`, `legend "tp8"`, `legend "tp4"`, `legend "tp4x2"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the plot lacks %q:\n%s", want, got)
		}
	}
	for _, pt := range v.Pareto.Points {
		if pt.TokS > c.p.Y.Max || pt.PerUser > c.p.X.Max {
			t.Errorf("%s %s (%g, %g) lies outside the axes", pt.Scenario, measure.LevelName(pt.Level), pt.PerUser, pt.TokS)
		}
	}
	// A run of unknown counts says its throughput is per server.
	plain, _ := testVerdict(t)
	pc, err := paretoPlot(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got := pc.p.Y.Label.Text; got != "output tok/s per server (GPUs unknown)" {
		t.Errorf("y axis %q without GPU counts", got)
	}
}

// TestParetoList: the text report's detail and verdict.md list the
// Pareto-optimal points the page lists, in the page's order (the most
// tokens per second per user first) and with its digits, under the page's
// caption; both sections are golden files, of a run compared per GPU.
func TestParetoList(t *testing.T) {
	v := perGPUReportVerdict(t)
	var text, md bytes.Buffer
	if err := Text(&text, v); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, v); err != nil {
		t.Fatal(err)
	}
	heading := paretoCaption(v.Pareto)
	section := func(name, out string) string {
		i := strings.Index(out, heading)
		if i < 0 {
			t.Fatalf("%s has no Pareto section (%q):\n%s", name, heading, out)
		}
		sec := out[i:]
		if j := strings.Index(sec, "\n\n"); j >= 0 && name == "text" {
			sec = sec[:j+1]
		}
		if name == "Markdown" {
			// The caption, a blank line, the table up to the next blank line.
			body := sec[len(heading)+2:]
			sec = sec[:len(heading)+2+strings.Index(body, "\n\n")+1]
		}
		return sec
	}
	ts, ms := section("text", text.String()), section("Markdown", md.String())
	golden.Check(t, filepath.Join("testdata", "pareto-per-gpu.txt"), []byte(ts))
	golden.Check(t, filepath.Join("testdata", "pareto-per-gpu.md"), []byte(ms))
	for name, sec := range map[string]string{"text": ts, "Markdown": ms} {
		if !strings.Contains(sec, "tok/s per GPU") || !strings.Contains(sec, "tok/s per user") || !strings.Contains(sec, "1 / the level's median TPOT") {
			t.Errorf("%s's Pareto heads do not say per GPU and per user:\n%s", name, sec)
		}
		// Each row's scenario, level and coordinates, in the page's order.
		var got []string
		for _, line := range strings.Split(sec, "\n") {
			f := strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '│' || r == ' ' })
			if len(f) == 4 && v.Scenario(f[0]) != nil {
				got = append(got, strings.Join(f, " "))
			}
		}
		var want []string
		opt := v.Pareto.Optimal()
		for i := len(opt) - 1; i >= 0; i-- {
			pt := opt[i]
			want = append(want, strings.Join([]string{pt.Scenario, measure.LevelLabel(pt.Level),
				strconv.FormatFloat(pt.TokS, 'f', paretoTokDigits, 64), strconv.FormatFloat(pt.PerUser, 'f', paretoUserDigits, 64)}, " "))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
			t.Errorf("%s lists\n%s\nwant the page's Pareto-optimal points\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
