package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The -update flag rewrites golden files. It is looked up rather than owned,
// so any test file of this package may declare it first.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

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
	}, &out, &errOut
}

// checkGolden compares got with testdata/NAME; on a mismatch it writes what
// it got beside the golden file as NAME.got.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		_ = os.WriteFile(path+".got", got, 0o644)
		t.Errorf("output differs from %s (got written to %s.got):\n%s", path, path, got)
	}
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
		{"engine warnings", "testdata/validate/engines/configs/campaign.yaml", "validate/engines.golden", exitOK, true},
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
			if other.Len() > 0 {
				t.Errorf("unexpected output on the other stream:\n%s", other)
			}
			checkGolden(t, tt.golden, got.Bytes())
		})
	}
}

// TestValidateShippedConfigs: the repository's own configs pass.
func TestValidateShippedConfigs(t *testing.T) {
	for cfg, want := range map[string]string{
		"../../configs/rtx6000-kimi.yaml": "ok: 3 scenarios, 0 warnings",
		"../../configs/demo.yaml":         "ok: 3 scenarios, 0 warnings",
		"../../configs/llamacpp.yaml":     "ok: 2 scenarios, 0 warnings",
		"../../configs/trtllm-h200.yaml":  "ok: 2 scenarios, 0 warnings",
	} {
		e, out, errOut := testEnv()
		if code := run(context.Background(), e, []string{"validate", cfg}); code != exitOK {
			t.Errorf("%s: exit %d\n%s", cfg, code, errOut)
			continue
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: summary:\n%s", cfg, out)
		}
	}
	e, out, _ := testEnv()
	run(context.Background(), e, []string{"validate", "../../configs/demo.yaml"})
	if !strings.Contains(out.String(), "env -- NCCL_PROTO=LL /usr/local/bin/bakeoff sim --sim-speed 20") {
		t.Errorf("demo: {bakeoff} is not this binary:\n%s", out)
	}
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
