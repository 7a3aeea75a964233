package preflight

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// TestRemovedFlagReplacement: a flag the help does not list is named with
// what replaced it, where the engine says (an option's own help, or the
// engine's source for a flag it removed), before the closest spelling; the
// replacement must be one this build takes.
func TestRemovedFlagReplacement(t *testing.T) {
	// A build that dropped --grpc-mode, whose successor's help still names
	// it (SGLang's --smg-grpc-mode, as server_args.py registers it).
	const smallHelp = `usage: sglang serve [-h] [--smg-grpc-mode] [--enable-metrics] [--tp-size TP_SIZE]

options:
  --smg-grpc-mode       Use the legacy SMG gRPC server (smg-grpc-servicer) instead of the HTTP
                        server. Replaces the deprecated --grpc-mode.
  --enable-metrics      Enable log prometheus metrics.
  --tp-size TP_SIZE, --tp TP_SIZE
                        The tensor parallelism size.
`
	small, err := Parse(engine.HelpArgparse, []byte(smallHelp))
	if err != nil {
		t.Fatal(err)
	}
	small.Engine = engine.SGLang
	sg := loadFixture(t, "sglang-help.txt", engine.HelpArgparse)
	sg.Engine = engine.SGLang
	tests := []struct {
		name  string
		tab   *Table
		words string
		want  string // "severity kind word flag suggest"
		text  string // what the finding says
	}{
		{"SGLang's removed --enable-ep-moe", sg, "--tp-size 8 --enable-ep-moe", "error removed 2 --enable-ep-moe --ep-size",
			"unknown flag --enable-ep-moe: SGLang removed it: set --ep-size to the same value as --tp-size instead"},
		{"SGLang's removed --enable-deepep-moe", sg, "--enable-deepep-moe", "error removed 0 --enable-deepep-moe --moe-a2a-backend",
			"unknown flag --enable-deepep-moe: SGLang removed it: set --moe-a2a-backend deepep instead"},
		{"a successor's help names the flag", small, "--grpc-mode", "error removed 0 --grpc-mode --smg-grpc-mode",
			"unknown flag --grpc-mode: this build's --smg-grpc-mode says it replaces it"},
		// The replacement is not in this build: no claim about it, the
		// closest spelling as before.
		{"a replacement this build lacks", small, "--enable-ep-moe", "error unknown 0 --enable-ep-moe --enable-metrics",
			"unknown flag --enable-ep-moe; the closest it accepts is --enable-metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := tt.tab.Check(strings.Fields(tt.words))
			if len(fs) != 1 {
				t.Fatalf("got %+v, want one finding", fs)
			}
			f := fs[0]
			if got := strings.Join([]string{f.Severity.String(), string(f.Kind), strconv.Itoa(f.Word), f.Flag, f.Suggest}, " "); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if f.Text != tt.text {
				t.Errorf("text %q, want %q", f.Text, tt.text)
			}
		})
	}
	// Another engine's help knows nothing of SGLang's removals.
	sg.Engine = engine.VLLM
	if fs := sg.Check([]string{"--enable-ep-moe"}); len(fs) != 1 || fs[0].Kind != Unknown {
		t.Errorf("an engine that did not remove it: %+v", fs)
	}
}

// TestRemovedFlagsHaveReplacements: every removed flag's replacement is an
// option of the SGLang help fixture (a build of today), and no removed flag
// is one of them: the table says what today's build refuses.
func TestRemovedFlagsHaveReplacements(t *testing.T) {
	sg := loadFixture(t, "sglang-help.txt", engine.HelpArgparse)
	for _, r := range removedFlags[engine.SGLang] {
		if sg.Lookup(r.replacement) == nil {
			t.Errorf("%s: replacement %s is not in the help", r.flag, r.replacement)
		}
		if sg.Lookup(r.flag) != nil {
			t.Errorf("%s is still in the help", r.flag)
		}
		if !strings.Contains(r.how, r.replacement) {
			t.Errorf("%s: %q does not name %s", r.flag, r.how, r.replacement)
		}
	}
}

// TestRuns: a program that exits 0 runs; one that fails is a
// *ProgramError with its output; one that hangs is killed at the bound and
// named.
func TestRuns(t *testing.T) {
	call := Call{Command: "env -- python3 -m sglang_router.launch_router --help", Dir: "/w"}
	if err := Runs(context.Background(), &fakeRunner{stdout: "usage: launch_router [-h]\n"}, call); err != nil {
		t.Errorf("a router that answers: %v", err)
	}
	r := &fakeRunner{stderr: "/usr/bin/python3: No module named sglang_router\n", err: errors.New("exit status 1")}
	err := Runs(context.Background(), r, call)
	var pe *ProgramError
	if !errors.As(err, &pe) || pe.Host != "gpu-box" {
		t.Fatalf("got %v, want a *ProgramError", err)
	}
	want := "`env -- python3 -m sglang_router.launch_router --help` on gpu-box: exit status 1\n/usr/bin/python3: No module named sglang_router"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if r.got != "cd /w && "+call.Command {
		t.Errorf("ran %q", r.got)
	}
	call.Timeout = 50 * time.Millisecond
	err = Runs(context.Background(), blockRunner{}, call)
	var hung *HungError
	if !errors.As(err, &hung) || !strings.Contains(err.Error(), "did not return within 50ms; killed") {
		t.Errorf("a program that hangs: %v", err)
	}
}
