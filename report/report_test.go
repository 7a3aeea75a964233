package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

func smallSweep() verdicttest.Sweep {
	s := verdicttest.DefaultSweep()
	s.Concurrency = []int{1, 2, 5, 30}
	return s
}

// writeCampaign writes a four-scenario run of three rounds under the noise
// of a real host (verdicttest.RealisticNoise): the baseline, EAGLE-3 topk=4
// (faster single-stream, slower under load), the baseline's configuration
// once more (ties or cannot be told apart), and a scenario that failed. The
// baseline's steps are slowdown times longer.
func writeCampaign(t *testing.T, dir string, seed uint64, slowdown float64, fingerprint string) *results.Run {
	return writeRounds(t, dir, seed, slowdown, fingerprint, fixtureRounds)
}

// fixtureRounds is the rounds of the test campaign: fixed, so that the golden
// files do not move with the campaign default.
const fixtureRounds = 5

func writeRounds(t *testing.T, dir string, seed uint64, slowdown float64, fingerprint string, rounds int) *results.Run {
	t.Helper()
	s := smallSweep()
	base := verdicttest.RealisticNoise(verdicttest.Baseline)
	base.Slowdown = slowdown
	again := verdicttest.RealisticNoise(verdicttest.Baseline)
	accept := 2.3
	names := []string{"baseline", "eagle3-topk4", "baseline-again", "eagle3-topk1-specv2"}
	launches := verdicttest.Campaign([]verdicttest.Engine{base, verdicttest.RealisticNoise(verdicttest.Eagle3TopK4), again}, s, rounds, seed)
	per := make([][][]measure.Record, 3)
	for i := range per {
		per[i] = make([][]measure.Record, rounds)
	}
	for _, l := range launches {
		per[l.Scenario][l.Round-1] = l.Records
	}
	m := verdicttest.Manifest("kimi-k25-eagle3", "20260101T000000Z", fingerprint, "baseline", s, names...)
	m.Rounds = rounds
	run, err := verdicttest.WriteRun(dir, m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: per[0]},
		{Name: "eagle3-topk4", Rounds: per[1], AcceptLength: &accept},
		{Name: "baseline-again", Rounds: per[2]},
		{Name: "eagle3-topk1-specv2", Status: results.StatusFailed,
			Reason: "healthy, then crashed on the first request: AttributeError"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func testVerdict(t *testing.T) (*verdict.Verdict, *results.Run) {
	t.Helper()
	return verdictOf(t, writeCampaign(t, t.TempDir(), 5, 1, "sha256:aaaa"))
}

func verdictOf(t *testing.T, run *results.Run) (*verdict.Verdict, *results.Run) {
	t.Helper()
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v.Dir = "" // a temporary path would make the golden files differ
	return v, run
}

func TestGolden(t *testing.T) {
	v, _ := testVerdict(t)
	one, _ := verdictOf(t, writeRounds(t, t.TempDir(), 1, 1, "sha256:aaaa", 1))
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"verdict.txt", func(b *bytes.Buffer) error { return Text(b, v) }},
		{"verdict.md", func(b *bytes.Buffer) error { return Markdown(b, v) }},
		{"benchstat.txt", func(b *bytes.Buffer) error { return Benchstat(b, v) }},
		{"verdict-one-round.txt", func(b *bytes.Buffer) error { return Text(b, one) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.render(&buf); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name), buf.Bytes())
		})
	}
}

func TestTextSaysWhatMatters(t *testing.T) {
	v, _ := testVerdict(t)
	var buf bytes.Buffer
	if err := Text(&buf, v); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"eagle3-topk4: +",            // the crossover sentence
		"loses from C=2 on",          // and where it turns
		"eagle3-topk1-specv2 failed", // a failed scenario is listed
		"accept length 2.30",
		fmt.Sprintf("  C=  1 | launches: %d | ok / requests: %d/%d | tok/s:", fixtureRounds, 30*fixtureRounds, 30*fixtureRounds),
		fmt.Sprintf("%d rounds: every scenario launched %d times", fixtureRounds, fixtureRounds),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchstatParses reads the output back with benchfmt, the parser
// benchstat uses, and checks every sample arrives.
func TestBenchstatParses(t *testing.T) {
	v, _ := testVerdict(t)
	var buf bytes.Buffer
	if err := Benchstat(&buf, v); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "benchstat.txt")
	got := map[string]int{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			if len(rec.Values) != 1 || rec.Values[0].Unit != "tok/s" {
				t.Fatalf("bad values %+v", rec.Values)
			}
			got[string(rec.Name)]++
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			name := "Serve/C=" + strconv.Itoa(l.Level.Concurrency) + "/scenario=" + s.Name
			if want := len(BenchValues(v, &l)); got[name] != want {
				t.Errorf("%s: %d results, want %d", name, got[name], want)
			}
		}
	}
}

func TestCSVRoundTrip(t *testing.T) {
	v, _ := testVerdict(t)
	// eagle3-topk4's figures come from attempt 1; its rerun, attempt 2, failed.
	spec := v.Scenario("eagle3-topk4")
	spec.Newest = &verdict.Attempt{Attempt: 2, Status: results.StatusFailed}
	var buf bytes.Buffer
	if err := CSV(&buf, v); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], CSVHeader) {
		t.Fatalf("header %v", rows[0])
	}
	col := map[string]int{}
	for i, h := range CSVHeader {
		col[h] = i
	}
	n := 0
	for _, row := range rows[1:] {
		c, _ := strconv.Atoi(row[col["level"]])
		l := v.Scenario(row[col["scenario"]]).Level(measure.ConcurrencyLevel(c))
		if l == nil {
			t.Fatalf("row for unknown level: %v", row)
		}
		n++
		tp, _ := strconv.ParseFloat(row[col["throughput_tok_s"]], 64)
		p99, _ := strconv.ParseFloat(row[col["latency_p99_s"]], 64)
		if tp != l.Throughput.Center || p99 != l.Latency.P99 {
			t.Errorf("%v: throughput %v latency p99 %v, want %v %v", row[:2], tp, p99, l.Throughput.Center, l.Latency.P99)
		}
		wantNewest := [2]string{}
		if row[col["scenario"]] == "eagle3-topk4" {
			wantNewest = [2]string{"2", results.StatusFailed}
		}
		if row[col["attempt"]] != "1" || [2]string{row[col["newest_attempt"]], row[col["newest_status"]]} != wantNewest {
			t.Errorf("%v: attempt %q, newest %q %q; want 1, %q", row[:2], row[col["attempt"]], row[col["newest_attempt"]], row[col["newest_status"]], wantNewest)
		}
		if cell := v.Cell(measure.ConcurrencyLevel(c), l2s(row)); cell.Compared {
			d, _ := strconv.ParseFloat(row[col["delta_pct"]], 64)
			if d != cell.DeltaPct {
				t.Errorf("%v: delta %v, want %v", row[:2], d, cell.DeltaPct)
			}
		}
	}
	want := 0
	for _, s := range v.Scenarios {
		want += len(s.Levels)
	}
	if n != want {
		t.Errorf("%d rows, want %d", n, want)
	}
}

func l2s(row []string) string { return row[0] }

func TestJSONRoundTrip(t *testing.T) {
	v, _ := testVerdict(t)
	var buf bytes.Buffer
	if err := JSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	first := buf.String()
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// Everything the file holds comes back (the verdict's unexported
	// working state does not travel, and need not).
	var again bytes.Buffer
	if err := JSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != first {
		t.Errorf("JSON round trip changed the verdict")
	}
	if back.Rows[1].Cells[1].Outcome == "" || back.Rounds != fixtureRounds {
		t.Errorf("outcome or rounds lost in the round trip: %+v", back.Rows[1].Cells[1])
	}
}

func TestWriteAll(t *testing.T) {
	v, run := testVerdict(t)
	if err := WriteAll(run.Dir, v); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{TextFile, MarkdownFile, CSVFile, JSONFile, BenchstatFile,
		"throughput.png", "throughput.svg", "speedup.png", "speedup.svg", "latency-p99.png", "latency-p99.svg"} {
		fi, err := os.Stat(filepath.Join(run.Dir, Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	f, err := os.Open(filepath.Join(run.Dir, Dir, "speedup.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("speedup.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("speedup.png is %v", b)
	}
	svg, _ := os.ReadFile(filepath.Join(run.Dir, Dir, "speedup.svg"))
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("eagle3-topk4")) {
		t.Errorf("speedup.svg lacks the svg element or the variant's legend")
	}
}

// writeHistory writes n more runs of the test campaign, with no run effect, as
// a diff's history: with them a diff judges absolute figures.
func writeHistory(t *testing.T, dir string, n int, rounds int) []*results.Run {
	t.Helper()
	var out []*results.Run
	for i := range n {
		out = append(out, writeRounds(t, filepath.Join(dir, fmt.Sprintf("history-%d", i)), uint64(900+i), 1, "sha256:aaaa", rounds))
	}
	return out
}

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	old := writeCampaign(t, filepath.Join(dir, "old"), 1, 1, "sha256:aaaa")
	same := writeCampaign(t, filepath.Join(dir, "same"), 7, 1, "sha256:aaaa")
	slower := writeCampaign(t, filepath.Join(dir, "slower"), 7, 1.10, "sha256:aaaa")
	history := append(writeHistory(t, dir, 2, fixtureRounds), old)
	for _, tc := range []struct {
		name      string
		new       *results.Run
		history   []*results.Run
		regressed bool
		says      string
	}{
		{"A/A", same, history, false, "no regression beyond 3% in 20 judged comparisons"},
		{"10% slower baseline", slower, history, true, "REGRESSED: "},
		// Without history a run's own figures cannot be told from its
		// night's luck: not judged, and never a silent pass.
		{"10% slower baseline, no history", slower, nil, false,
			"but baseline C=5 fell −10.7%, which cannot be separated from the run effect without 3 runs of history (have 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := rundiff.Compare(old, tc.new, rundiff.Options{History: tc.history})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := DiffText(&buf, d); err != nil {
				t.Fatal(err)
			}
			if d.Regressed() != tc.regressed {
				t.Errorf("Regressed() = %v, want %v\n%s", d.Regressed(), tc.regressed, buf.String())
			}
			if tc.regressed && !strings.Contains(buf.String(), "REGRESSION") {
				t.Errorf("no REGRESSION mark:\n%s", buf.String())
			}
			if !strings.Contains(buf.String(), tc.says) {
				t.Errorf("the diff does not say %q:\n%s", tc.says, buf.String())
			}
			for _, r := range d.Rows {
				if r.Method != verdict.MethodLaunches {
					t.Errorf("%s %s: method %s, want launches (fixtureRounds each)", r.Scenario, r.Level, r.Method)
				}
				if r.Outcome == "" && !r.Unjudged {
					t.Errorf("%s %s: no outcome", r.Scenario, r.Level)
				}
			}
			if !strings.Contains(buf.String(), "eagle3-topk1-specv2: no measurements in either run") {
				t.Errorf("the failed scenario is not listed:\n%s", buf.String())
			}
		})
	}
}

// TestDiffOneRound: runs of one launch per scenario cannot measure the
// launch-to-launch variation, so a slowdown under min_effect (5%) is never
// a regression even when the within-launch samples call it significant,
// and the output says why; a 10% slowdown still is one.
func TestDiffOneRound(t *testing.T) {
	dir := t.TempDir()
	old := writeRounds(t, filepath.Join(dir, "old"), 1, 1, "sha256:aaaa", 1)
	for _, tc := range []struct {
		slowdown  float64
		regressed bool
	}{{1.035, false}, {1.10, true}} {
		t.Run(fmt.Sprint(tc.slowdown), func(t *testing.T) {
			new := writeRounds(t, filepath.Join(dir, fmt.Sprint(tc.slowdown)), 1, tc.slowdown, "sha256:aaaa", 1)
			d, err := rundiff.Compare(old, new, rundiff.Options{History: append(writeHistory(t, dir, 9, 1), old)})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := DiffText(&buf, d); err != nil {
				t.Fatal(err)
			}
			if d.Regressed() != tc.regressed {
				t.Errorf("Regressed() = %v, want %v\n%s", d.Regressed(), tc.regressed, buf.String())
			}
			if !strings.Contains(buf.String(), "launch-to-launch variation not measured") {
				t.Errorf("the diff does not say launch-to-launch variation was not measured:\n%s", buf.String())
			}
			for _, r := range d.Rows {
				if r.Method != verdict.MethodWithinLaunch || r.Outcome == verdict.OutcomeTie {
					t.Errorf("%s %s: method %s outcome %s; one launch a side is within-launch and never a tie", r.Scenario, r.Level, r.Method, r.Outcome)
				}
			}
		})
	}
}

func TestDiffRefusesUnlikeRuns(t *testing.T) {
	dir := t.TempDir()
	old := writeCampaign(t, filepath.Join(dir, "old"), 1, 1, "sha256:aaaa")
	other := writeCampaign(t, filepath.Join(dir, "other"), 2, 1, "sha256:bbbb")
	other.Manifest.Sweep.MaxTokens = 512
	_, err := rundiff.Compare(old, other, rundiff.Options{})
	var fe *rundiff.FingerprintError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a FingerprintError", err)
	}
	if !strings.Contains(err.Error(), "max_tokens: 200 → 512") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("error does not say which field differs: %v", err)
	}
	d, err := rundiff.Compare(old, other, rundiff.Options{Force: true})
	if err != nil {
		t.Fatalf("forced: %v", err)
	}
	if !d.Forced || len(d.FingerprintFields) != 1 {
		t.Errorf("forced diff: Forced=%v fields=%v", d.Forced, d.FingerprintFields)
	}
}
