package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// testEnv is a process boundary with buffers and a fixed clock.
func testEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &env{
		Stdin:      strings.NewReader(""),
		Stdout:     &out,
		Stderr:     &errOut,
		Getenv:     func(string) string { return "" },
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Executable: "/usr/local/bin/bakeoff",
		// The real pid: a host lock a test takes must name a live process.
		Hostname: "test-machine",
		PID:      os.Getpid(),
	}, &out, &errOut
}

func TestValidateGolden(t *testing.T) {
	tests := []struct {
		name, config, golden string
		wantCode             int
		stdout               bool // which stream is golden
	}{
		{"good", "testdata/validate/good/configs/campaign.yaml", "validate/good.golden", exitOK, true},
		{"bad", "testdata/validate/bad/configs/campaign.yaml", "validate/bad.golden", exitBadInput, false},
		// The shipped examples of the engines beyond SGLang.
		{"llamacpp", "../../configs/llamacpp.yaml", "validate/llamacpp.golden", exitOK, true},
		{"trtllm", "../../configs/trtllm-h200.yaml", "validate/trtllm.golden", exitOK, true},
		// A host without a GPU (gpu: none): an A/A pair of llama-server on the CPU.
		{"llamacpp-cpu", "../../configs/llamacpp-cpu.yaml", "validate/llamacpp-cpu.golden", exitOK, true},
		{"engine warnings", "testdata/validate/engines/configs/campaign.yaml", "validate/engines.golden", exitOK, true},
		{"synthetic workload", "testdata/validate/workload/configs/campaign.yaml", "validate/workload.golden", exitOK, true},
		{"rates", "testdata/validate/rates/configs/campaign.yaml", "validate/rates.golden", exitOK, true},
		{"trace", "testdata/validate/trace/configs/campaign.yaml", "validate/trace.golden", exitOK, true},
		{"sessions", "testdata/validate/sessions/configs/campaign.yaml", "validate/sessions.golden", exitOK, true},
		{"malformed sessions", "testdata/validate/sessions-bad/configs/campaign.yaml", "validate/sessions-bad.golden", exitBadInput, false},
		{"slurm", "testdata/validate/slurm/configs/campaign.yaml", "validate/slurm.golden", exitOK, true},
		{"fleet", "testdata/validate/fleet/configs/campaign.yaml", "validate/fleet.golden", exitOK, true},
		{"fleet split", "testdata/validate/fleet-split/configs/campaign.yaml", "validate/fleet-split.golden", exitOK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, out, errOut := testEnv()
			code := run(context.Background(), e, []string{"validate", tt.config})
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, errOut)
			}
			got, other := out, errOut
			if !tt.stdout {
				got, other = errOut, out
			}
			// A campaign that loads ends with the note that its flags were
			// not checked against the engine (TestValidateNoHostNote).
			if o := strings.TrimSuffix(other.String(), flagsNotChecked+"\n"); tt.stdout && o != "" || !tt.stdout && other.Len() > 0 {
				t.Errorf("unexpected output on the other stream:\n%s", other)
			}
			golden.Check(t, filepath.Join("testdata", tt.golden), got.Bytes())
		})
	}
}

// oldSpellings are flags and variables that current engines removed,
// renamed, or keep only as an older alias, with what replaced them. Each
// scenario file names the engine source it was checked against.
var oldSpellings = []struct {
	re  *regexp.Regexp
	now string
}{
	{regexp.MustCompile(`--cuda-graph-max-bs(\s|$)`), "SGLang: --cuda-graph-max-bs-decode"},
	{regexp.MustCompile(`--enable-flashinfer-allreduce-fusion(\s|$)`), "SGLang: deprecated alias of --flashinfer-allreduce-fusion-backend auto"},
	{regexp.MustCompile(`SGLANG_ENABLE_SPEC_V2`), "SGLang: removed; speculative decoding always runs the V2 worker, --disable-overlap-schedule is the synchronous path"},
	{regexp.MustCompile(`--disable-cuda-graph(\s|$)`), "SGLang: --cuda-graph-backend-{decode,prefill} disabled"},
	{regexp.MustCompile(`--tp\s`), "SGLang: --tp-size (--tp was only an abbreviation argparse accepted)"},
	{regexp.MustCompile(`--model-draft\s|\s-md\s|--gpu-layers-draft\s`), "llama.cpp: --spec-draft-model, --spec-draft-ngl"},
	{regexp.MustCompile(`--draft(-n|-max|-min|-n-min)?\s`), "llama.cpp: removed; --spec-draft-n-max, --spec-draft-n-min"},
	{regexp.MustCompile(`--extra_llm_api_options\s`), "trtllm-serve: --config"},
}

// TestValidateShippedConfigs: every config the repository ships passes,
// without warnings, and launches its engine with today's spellings; one
// added to configs/ is covered without a line here.
func TestValidateShippedConfigs(t *testing.T) {
	configs, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(configs) < 5 {
		t.Fatalf("shipped configs: %v (%v)", configs, err)
	}
	for _, cfg := range configs {
		want := ", 0 warnings\n"
		e, out, errOut := testEnv()
		if code := run(context.Background(), e, []string{"validate", cfg}); code != exitOK {
			t.Errorf("%s: exit %d\n%s", cfg, code, errOut)
			continue
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: summary:\n%s", cfg, out)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.Contains(line, "env -- ") {
				continue
			}
			for _, old := range oldSpellings {
				if m := old.re.FindString(line); m != "" {
					t.Errorf("%s launches with %q (%s):\n%s", cfg, strings.TrimSpace(m), old.now, line)
				}
			}
		}
	}
	e, out, _ := testEnv()
	run(context.Background(), e, []string{"validate", "../../configs/demo.yaml"})
	if !strings.Contains(out.String(), "NCCL_PROTO=LL /usr/local/bin/bakeoff sim --sim-speed 40") {
		t.Errorf("demo: {bakeoff} is not this binary:\n%s", out)
	}
}

// TestShippedFilesNameTheirEngineVersion: engines rename flags every few
// months, so every shipped config but the demo (which runs the sim), and
// every scenario file with flags or variables of its own, says in a comment
// which engine source its spellings were checked against. Every scenario
// file belongs to a shipped config, so that the test above validates it.
func TestShippedFilesNameTheirEngineVersion(t *testing.T) {
	const says = "checked against"
	configs, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("shipped configs: %v (%v)", configs, err)
	}
	used := map[string]bool{}
	for _, cfg := range configs {
		c, err := campaign.Load(cfg)
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		for _, s := range c.Scenarios {
			used[s.Name] = true
		}
		for _, sp := range c.Spaces {
			used[sp.Scenario] = true // its file, expanded into its points
		}
		if filepath.Base(cfg) == "demo.yaml" {
			continue
		}
		if text := yamlComments(readText(t, cfg)); !strings.Contains(text, says) {
			t.Errorf("%s does not say which engine version it was %s", cfg, says)
		}
	}
	scenarios, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(scenarios) == 0 {
		t.Fatalf("shipped scenarios: %v (%v)", scenarios, err)
	}
	ownFlags := regexp.MustCompile(`(?m)^(args|env):`)
	for _, path := range scenarios {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if !used[name] {
			t.Errorf("%s is in no shipped config, so nothing validates it", path)
		}
		if text := readText(t, path); ownFlags.MatchString(text) && !strings.Contains(yamlComments(text), says) {
			t.Errorf("%s sets flags but does not say which engine version they were %s", path, says)
		}
	}
}

// yamlComments joins a YAML file's comment lines into one lower-case text, so
// that a phrase wrapped over two lines is found.
func yamlComments(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if _, c, ok := strings.Cut(line, "#"); ok {
			b.WriteString(strings.TrimSpace(c))
			b.WriteByte(' ')
		}
	}
	return strings.ToLower(b.String())
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValidateUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"a.yaml", "b.yaml"}, {"--flag"}} {
		e, _, errOut := testEnv()
		if code := run(context.Background(), e, append([]string{"validate"}, args...)); code != exitBadInput {
			t.Errorf("validate %q: exit %d, want %d", args, code, exitBadInput)
		}
		if !strings.Contains(errOut.String(), "usage: bakeoff validate CONFIG") {
			t.Errorf("validate %q: stderr %q", args, errOut)
		}
	}
	e, _, errOut := testEnv()
	if code := run(context.Background(), e, []string{"validate", "testdata/validate/nosuch.yaml"}); code != exitBadInput ||
		!strings.Contains(errOut.String(), "testdata/validate/nosuch.yaml: reading campaign: no such file or directory") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
}

// TestValidateTypicalDuration: the typical duration comes from the newest
// earlier run of the same campaign and sweep (the median of its completed
// launches); a newer run of another sweep is passed over.
func TestValidateTypicalDuration(t *testing.T) {
	const config = "testdata/validate/good/configs/campaign.yaml"
	c, err := campaign.Load(config)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(run, fingerprint string, secs ...float64) {
		dir := filepath.Join(root, "golden", run)
		if err := results.WriteJSONAtomic(filepath.Join(dir, results.ManifestFile),
			results.Manifest{Campaign: "golden", Run: run, Fingerprint: fingerprint}); err != nil {
			t.Fatal(err)
		}
		j, err := orchestrator.OpenJournal(filepath.Join(dir, results.JournalFile))
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		for i, s := range secs {
			outcome := orchestrator.OutcomeOK
			if s < 0 {
				outcome, s = orchestrator.OutcomeFailed, -s
			}
			if err := j.Append(orchestrator.JournalEntry{Scenario: "base", Round: i + 1, Attempt: 1,
				Phase: orchestrator.PhaseScenario, Event: "end", Outcome: outcome, DurationS: s}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("20260101T000000Z", c.Fingerprint(), 60, 120, 90, -5)
	write("20260102T000000Z", "sha256:another-sweep", 1, 1, 1)
	e, out, errOut := testEnv()
	if code := run(context.Background(), e, []string{"validate", config, "--results", root}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "typical: 36m, 1m30s per launch (the median of 3 launches in " + filepath.Join(root, "golden", "20260101T000000Z") + ")"
	if !strings.Contains(out.String(), want) {
		t.Errorf("validate does not say %q:\n%s", want, out)
	}
}

// TestValidateNoHostNote: without --host, validate says once, on stderr,
// that the flags were not checked against the engine, and exits as before:
// a removed flag (SGLang's --enable-ep-moe) passes here. With the
// preflight off (engine.help: off) there is nothing to defer, and no note.
func TestValidateNoHostNote(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("scenarios/a.yaml", "engine: sglang\nmodel: /m\nargs:\n  tp-size: 8\n  enable-ep-moe: true\n")
	for _, tt := range []struct {
		name, engine string
		note         bool
	}{
		{"flags not checked", "", true},
		{"help: off", "engine:\n  help: off\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write("configs/campaign.yaml", "campaign: t\nhost: local\nsweep:\n  concurrency: [1]\nbaseline: a\nscenarios: [a]\n"+tt.engine)
			e, out, errOut := testEnv()
			if code := run(context.Background(), e, []string{"validate", filepath.Join(dir, "configs", "campaign.yaml")}); code != exitOK {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitOK, errOut)
			}
			if !strings.Contains(out.String(), "--enable-ep-moe") {
				t.Errorf("the launch does not show the flag:\n%s", out)
			}
			want := ""
			if tt.note {
				want = flagsNotChecked + "\n"
			}
			if errOut.String() != want {
				t.Errorf("stderr %q, want %q", errOut, want)
			}
		})
	}
	if !strings.Contains(flagsNotChecked, "--host") {
		t.Errorf("the note does not say how to check them: %q", flagsNotChecked)
	}
}
