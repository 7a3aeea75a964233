package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// endWhere is what a run's end says of its files, with paths that do not
// depend on the machine.
var endWhere = Where{
	RunDir: "results/kimi-k25-eagle3/20260101T000000Z",
	Page:   "results/kimi-k25-eagle3/20260101T000000Z/report/index.html",
}

// TestEndGolden is the last screen of a run at a narrow and a common
// terminal's width: the checks, the table, the sentences, the cost and the
// paths, in that order and nothing after; the demo's shape, so that its
// many warnings of one kind read as one line.
func TestEndGolden(t *testing.T) {
	v := demoShaped(t)
	for _, width := range []int{80, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var buf bytes.Buffer
			if err := End(&buf, v, width, endWhere); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", fmt.Sprintf("end-%d.txt", width)), buf.Bytes())
		})
	}
}

// TestEndFitsColumns checks that no line of the end is wider than the
// terminal, at widths from a narrow split pane up, a status line with a
// long path included.
func TestEndFitsColumns(t *testing.T) {
	v, _ := testVerdict(t)
	where := endWhere
	where.Status = []string{"Interrupted. Resume with: bakeoff run configs/kimi-k25-eagle3.yaml --resume /home/someone/bakeoff/results/kimi-k25-eagle3/20260101T000000Z-with-a-long-name"}
	for _, width := range []int{60, 80, 100, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var buf bytes.Buffer
			if err := End(&buf, v, width, where); err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(buf.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > width {
					t.Errorf("line %d is %d columns wide, more than %d:\n%s", i+1, n, width, line)
				}
			}
		})
	}
}

// TestCheckedLines checks that notes of one kind read as one line: the note
// itself when it is alone, else how many levels or notes and what they say;
// problems before warnings, then the checks that passed.
func TestCheckedLines(t *testing.T) {
	c := func(n int) measure.Level { return measure.Level{Concurrency: n} }
	scenario := func(name string, levels ...int) verdict.Scenario {
		s := verdict.Scenario{Name: name, Status: "ok"}
		for _, n := range levels {
			s.Levels = append(s.Levels, verdict.Level{Level: c(n)})
		}
		return s
	}
	client := func(s string, n int) verdict.Note {
		return verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckClient, Scenario: s, Level: c(n),
			Text: fmt.Sprintf("%s C=%d: the load generator may have set the pace (dispatch lag p99 3.10 ms against median latency 0.20 s)", s, n)}
	}
	for _, tc := range []struct {
		name  string
		notes []verdict.Note
		want  []string
	}{
		{"one of a kind is itself", []verdict.Note{client("a", 1)},
			[]string{"!  a C=1: the load generator may have set the pace (dispatch lag p99 3.10 ms against median latency 0.20 s)"}},
		{"levels are counted", []verdict.Note{client("a", 1), client("a", 2), client("b", 2)},
			[]string{"!  3 of 4 levels: the load generator may have set the pace; shown as doubted, not decided"}},
		{"an unnamed kind says what its first note says", []verdict.Note{
			{Severity: verdict.SeverityWarn, Check: "new", Scenario: "a", Text: "a: something odd (figures); more words"},
			{Severity: verdict.SeverityWarn, Check: "new", Scenario: "b", Text: "b: something odd (other figures)"},
		}, []string{"!  2 of 2 scenarios: something odd"}},
		{"a level with two notes counts once; the gist leaves out where and the figures", []verdict.Note{
			{Severity: verdict.SeverityWarn, Check: verdict.CheckSamples, Scenario: "a", Level: c(2),
				Text: "a C=2 round 1 repeat 0: the steady state (0.2 s) is shorter than one median request latency (0.2 s): one sample"},
			{Severity: verdict.SeverityWarn, Check: verdict.CheckSamples, Scenario: "a", Level: c(2),
				Text: "a C=2 round 2 repeat 0: the steady state (0.19 s) is shorter than one median request latency (0.2 s): one sample"},
			{Severity: verdict.SeverityWarn, Check: verdict.CheckSamples, Scenario: "b", Level: c(2),
				Text: "b C=2 round 1 repeat 0: the steady state (0.21 s) is shorter than one median request latency (0.22 s): one sample"},
		}, []string{"!  2 of 4 levels: the steady state is shorter than one median request latency: one sample"}},
		{"problems are never counted", []verdict.Note{
			{Severity: verdict.SeverityRed, Check: verdict.CheckScenario, Scenario: "a", Text: "a round 2 failed in phase ready: OOM; the verdict uses its other rounds"},
			{Severity: verdict.SeverityRed, Check: verdict.CheckScenario, Scenario: "b", Text: "b failed in phase launch: no such file; it has no measurements"},
		}, []string{"!! a round 2 failed in phase ready: OOM", "!! b failed in phase launch: no such file"}},
		{"notes on no one scenario are counted as notes", []verdict.Note{
			{Severity: verdict.SeverityWarn, Check: "new", Text: "something odd; more words"},
			{Severity: verdict.SeverityWarn, Check: "new", Scenario: "a", Text: "a: something else"},
		}, []string{"!  2 notes: something odd"}},
		{"problems first, passed checks last", []verdict.Note{
			{Severity: verdict.SeverityInfo, Check: verdict.CheckFingerprint, Text: "same sweep"},
			client("a", 1),
			{Severity: verdict.SeverityRed, Check: verdict.CheckScenario, Scenario: "b", Text: "b failed"},
			{Severity: verdict.SeverityInfo, Check: verdict.CheckCache, Text: "a: cleared"},
			{Severity: verdict.SeverityInfo, Check: verdict.CheckCache, Text: "b: cleared"},
		}, []string{"!! b failed", "!  a C=1: the load generator may have set the pace (dispatch lag p99 3.10 ms against median latency 0.20 s)",
			"ok 2 checks passed: fingerprint, cache"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &verdict.Verdict{Notes: tc.notes, Scenarios: []verdict.Scenario{scenario("a", 1, 2), scenario("b", 1, 2)}}
			var got []string
			for _, l := range checkedLines(v) {
				got = append(got, noteMark(verdict.Note{Severity: l.Severity})+l.Text)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// demoShaped is the test campaign with what the demo's run adds: energy at
// every level but the first, and the client warning on most levels (the
// demo's 18 of 24: here 9 of 12) in place of the note that the client kept
// up.
func demoShaped(t *testing.T) *verdict.Verdict {
	v, _ := testVerdict(t)
	v = withEnergy(v)
	var client []verdict.Note
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			client = append(client, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckClient, Scenario: s.Name, Level: l.Level,
				Text: fmt.Sprintf("%s %s: the load generator may have set the pace (it held freed slots empty 1.4%% of the time, dispatch lag p99 3.10 ms); not decided: %s",
					s.Name, measure.LevelName(l.Level), verdict.DoubtAdvice(verdict.DoubtPace))})
		}
	}
	var notes []verdict.Note
	for _, n := range v.Notes {
		if n.Check == verdict.CheckConcurrency {
			continue
		}
		notes = append(notes, n)
		if n.Severity == verdict.SeverityRed {
			notes = append(notes, client[:9]...) // most severe first
		}
	}
	v.Notes = notes
	return v
}

// TestMarkdownForAPullRequest: verdict.md starts with the table and the
// sentences, folds the notes, has the energy table, and stays short: the
// demo's (six levels, sequential) was 336 lines and must be under 80. The
// test campaign has four levels and one sequential line per variant fewer,
// so it is held under 70.
func TestMarkdownForAPullRequest(t *testing.T) {
	v := demoShaped(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, v); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "verdict-pr.md"), buf.Bytes())
	md := buf.String()
	if n := strings.Count(md, "\n"); n >= 70 {
		t.Errorf("verdict.md is %d lines, want under 70", n)
	}
	order := []string{"| C ", "eagle3-topk4: +3.7% at C=1", "**Cost:**", "J/1k tok", "<details>",
		"9 of 12 levels: the load generator may have set the pace; shown as doubted, not decided (baseline at C=1, C=2, C=5, C=30;", "</details>"}
	at := 0
	for _, want := range order {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("verdict.md lacks %q after byte %d:\n%s", want, at, md)
		}
		at += i
	}
}

// TestFold: prose is folded at spaces with a hanging indent, a line that
// fits keeps its spacing, and a word longer than a line is cut.
func TestFold(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		width   int
		want    []string
	}{
		{"fits, spacing kept", "Report:  a/b", 20, []string{"Report:  a/b"}},
		{"folded with the indent", "one two three four five", 12, []string{"- one two", "  three four", "  five"}},
		{"a long word is cut", "path /a/very/long/path/name", 10, []string{"- path", "  /a/very/", "  long/pat", "  h/name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, rest := "- ", "  "
			if tc.name == "fits, spacing kept" {
				first, rest = "", ""
			}
			got := fold(tc.s, tc.width, first, rest)
			if !slices.Equal(got, tc.want) {
				t.Errorf("fold(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
			}
		})
	}
}
