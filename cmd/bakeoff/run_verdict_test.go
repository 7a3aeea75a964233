package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// TestRunEndsWithTheAnswer: the end of a run writes the report files, then
// prints the verdict's end block with how the run ended and where the report
// is last, every line within the terminal's width.
func TestRunEndsWithTheAnswer(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	const width = 80
	var out bytes.Buffer
	where := report.Where{RunDir: dir, Status: []string{"Interrupted. Resume with: bakeoff run configs/demo.yaml --resume " + dir}}
	if _, err := printVerdict(&out, dir, width, where); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, n, l)
		}
	}
	text := out.String()
	order := []string{"what the run checked", "┌", "eagle3: inconclusive", "Cost: ", "Interrupted. Resume with:",
		"Results: " + dir, "Report:  " + filepath.Join(dir, report.Dir, report.HTMLFile), "Details:", "bakeoff report "}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("the end lacks %q after byte %d:\n%s", want, at, text)
		}
		at += i
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Details: ") && !strings.HasPrefix(last, "  ") {
		t.Errorf("the end's last line is %q, want where the details are", last)
	}
	if _, err := os.Stat(filepath.Join(dir, report.Dir, report.TextFile)); err != nil {
		t.Errorf("the report files were not written: %v", err)
	}
}

// TestReportDetailSaysWhereTheTimeWent: the detail ends with the journal's
// time per phase, which the end of a run leaves out.
func TestReportDetailSaysWhereTheTimeWent(t *testing.T) {
	dir := writeTestRun(t, t.TempDir(), 1, 1, "sha256:aa", 200)
	journal := `{"time":"2026-01-01T00:00:00Z","scenario":"baseline","phase":"sweep","event":"end","outcome":"ok","duration_s":30}
{"time":"2026-01-01T00:00:00Z","scenario":"baseline","phase":"ready","event":"end","outcome":"ok","duration_s":10}
`
	if err := os.WriteFile(filepath.Join(dir, results.JournalFile), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, errOut := testEnv()
	if code := run(context.Background(), e, []string{"report", dir, "--detail"}); code != exitOK {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	if !strings.Contains(out.String(), "Where the time went:\n  sweep ") || !strings.Contains(out.String(), "30.0s   75.0%  (1×)\n  ready ") {
		t.Errorf("the detail lacks where the time went:\n%s", out)
	}
	e, out, _ = testEnv()
	if code := run(context.Background(), e, []string{"report", dir}); code != exitOK || strings.Contains(out.String(), "Where the time went") {
		t.Errorf("exit %d; the end of a run says where the time went:\n%s", code, out)
	}
}

// TestWritePolicy: a finished race whose policy is one engine setting
// leaves it in the run's folder: the setting's file, and a scenario that
// serves it, naming that file by its absolute path, which loads as a
// campaign's scenario does. A policy that is not one setting writes
// nothing.
func TestWritePolicy(t *testing.T) {
	dir := t.TempDir()
	spec := policy.Config{Name: "spec", Engine: "sglang", Model: "/m", Args: []policy.Arg{
		{Key: "speculative-algorithm", Values: []string{"EAGLE3"}}, {Key: "speculative-num-steps", Values: []string{"2"}}}}
	bands := []policy.Band{{Config: "spec", From: "C=1", To: "C=1"}, {Config: "off", From: "C=16", To: "C=64"}}
	v := &verdict.Verdict{Campaign: "race",
		Selection: &selection.Result{Done: true, Levels: []selection.LevelResult{{Level: "C=1", Selected: "spec"}, {Level: "C=16", Selected: "off"}, {Level: "C=64", Selected: "off"}}},
		Policy:    policy.Write(bands, map[string]policy.Config{"spec": spec, "off": {Name: "off", Engine: "sglang", Model: "/m"}}),
	}
	if err := writePolicy(dir, v); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, report.PolicyDir, "sglang-adaptive.json")
	data, err := os.ReadFile(config)
	if err != nil || !strings.Contains(string(data), `"16": {"candidate_steps": [0]}`) {
		t.Fatalf("the setting's file: %v\n%s", err, data)
	}
	s, err := campaign.LoadScenario(filepath.Join(dir, report.PolicyDir, report.PolicyScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ArgValue("speculative-adaptive-config"); got != config {
		t.Errorf("the scenario reads %q, want %q", got, config)
	}
	// vLLM's setting is all in the scenario's flags: no file beside it.
	vdir := t.TempDir()
	vspec := policy.Config{Name: "spec", Engine: "vllm", Model: "/m", Args: []policy.Arg{
		{Key: "speculative-config", Values: []string{`{"method": "eagle3", "model": "/d", "num_speculative_tokens": 3}`}}}}
	v.Policy = policy.Write(bands, map[string]policy.Config{"spec": vspec, "off": {Name: "off", Engine: "vllm", Model: "/m"}})
	if err := writePolicy(vdir, v); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(vdir, report.PolicyDir))
	if len(entries) != 1 || entries[0].Name() != report.PolicyScenarioFile {
		t.Errorf("vLLM's policy wrote %v", entries)
	}
	vs, err := campaign.LoadScenario(filepath.Join(vdir, report.PolicyDir, report.PolicyScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := vs.ArgValue("speculative-config"); !strings.Contains(got, `"num_speculative_tokens_per_batch_size":[[1,15,3],[16,16,0]]`) {
		t.Errorf("vLLM's speculative config %s", got)
	}
	empty := t.TempDir()
	v.Policy = &policy.Written{Why: "a tree"}
	if err := writePolicy(empty, v); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(empty, report.PolicyDir)); !os.IsNotExist(err) {
		t.Errorf("a policy that is not one setting wrote %s (%v)", report.PolicyDir, err)
	}
}
