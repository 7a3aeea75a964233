package soak

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// auditCase is one launch written to disk: ok records per level (plus one
// warm-up), and served access lines in its server log.
type auditCase struct {
	name     string
	status   string
	perLevel map[int]int
	levelsOK map[int]int // levels.json's OK counts; perLevel when nil
	served   int         // -1: no server.log
	smoke    bool
	want     LaunchAudit
}

func TestAudit(t *testing.T) {
	const requests = 4
	full := map[int]int{1: 4, 2: 4}
	for _, tc := range []auditCase{
		{name: "complete", status: results.StatusOK, perLevel: full, served: 1 + 1 + 8, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 10, Smoke: 1, Recorded: 9}},
		{name: "one answered but not on disk", status: results.StatusOK, perLevel: full, served: 11, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 11, Smoke: 1, Recorded: 9, Lost: 1}},
		{name: "one on disk never answered", status: results.StatusOK, perLevel: full, served: 9, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 9, Smoke: 1, Recorded: 9, Phantom: 1}},
		{name: "a level short", status: results.StatusOK, perLevel: map[int]int{1: 4, 2: 3}, served: 9, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 9, Smoke: 1, Recorded: 8,
				Short: []string{"C=2: 3 on disk, 3 in levels.json, 4 asked"}}},
		{name: "levels.json disagrees", status: results.StatusOK, perLevel: full, levelsOK: map[int]int{1: 4, 2: 5}, served: 10, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 10, Smoke: 1, Recorded: 9,
				Short: []string{"C=2: 4 on disk, 5 in levels.json, 4 asked"}}},
		{name: "crashed mid-sweep, all it answered kept", status: results.StatusFailed, perLevel: map[int]int{1: 3}, served: 5, smoke: true,
			want: LaunchAudit{HaveLog: true, Served: 5, Smoke: 1, Recorded: 4}},
		{name: "host lost: no log", status: results.StatusFailed, perLevel: map[int]int{1: 2}, served: -1, smoke: true,
			want: LaunchAudit{Smoke: 1, Recorded: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeAuditRun(t, dir, tc)
			got, err := Audit(dir, requests)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d audits, want 1", len(got))
			}
			g, w := got[0], tc.want
			if g.HaveLog != w.HaveLog || g.Served != w.Served || g.Smoke != w.Smoke || g.Recorded != w.Recorded ||
				g.Lost != w.Lost || g.Phantom != w.Phantom || !slices.Equal(g.Short, w.Short) {
				t.Errorf("got %+v\nwant %+v", g, w)
			}
		})
	}
}

func writeAuditRun(t *testing.T, dir string, tc auditCase) {
	t.Helper()
	ld := results.LaunchDir("a", 1)
	adir := filepath.Join(dir, filepath.FromSlash(ld))
	if err := os.MkdirAll(adir, 0o700); err != nil {
		t.Fatal(err)
	}
	sr := results.ScenarioResult{Name: "a", Status: tc.status, Attempt: 1, Round: 1, Dir: ld,
		PhaseSeconds: map[string]float64{"ready": 1}}
	if tc.smoke {
		sr.PhaseSeconds["smoke"] = 0.1
	}
	if tc.status == results.StatusFailed {
		sr.FailedPhase, sr.Reason = "sweep", "server exited during the sweep"
	}
	var lines []string
	add := func(r measure.Record) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add(measure.Record{Level: measure.ConcurrencyLevel(1), Warmup: true, Tokens: 8})
	for _, l := range []int{1, 2} {
		n, ok := tc.perLevel[l]
		if !ok {
			continue
		}
		for i := 0; i < n; i++ {
			add(measure.Record{Level: measure.ConcurrencyLevel(l), Seq: i, Tokens: 8})
		}
		// A failed request is on disk but was never answered in full.
		add(measure.Record{Level: measure.ConcurrencyLevel(l), Seq: n, ErrClass: "cut"})
		okCount := n
		if tc.levelsOK != nil {
			okCount = tc.levelsOK[l]
		}
		if tc.status == results.StatusOK {
			sr.Levels = append(sr.Levels, measure.LevelSummary{Level: measure.ConcurrencyLevel(l), Counts: measure.Counts{Requests: n + 1, OK: okCount, Failed: 1}})
		}
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(adir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(results.RequestsFile, strings.Join(lines, "\n")+"\n")
	if tc.served >= 0 {
		var log strings.Builder
		log.WriteString("INFO:     127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK\n")
		for i := 0; i < tc.served; i++ {
			fmt.Fprintf(&log, "INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", 5001+i)
		}
		log.WriteString("INFO:     127.0.0.1:6000 - \"POST /v1/chat/completions HTTP/1.1\" 503 Service Unavailable\n")
		write(results.ServerLog, log.String())
	}
	m := results.Manifest{Campaign: "c", Run: "r", Scenarios: []string{"a"}, Baseline: "a"}
	if err := results.WriteJSONAtomic(filepath.Join(dir, results.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	s := results.Summary{Campaign: "c", Run: "r", Baseline: "a", Scenarios: []results.ScenarioResult{sr}}
	if err := results.WriteJSONAtomic(filepath.Join(dir, results.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
}
