package cmdline

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// TestHelpGolden: the --help the table writes, at argparse's 80 columns
// (`go test ./sim/ -run HelpGolden -update` rewrites it). Its layout was
// checked against Python's argparse given the same actions: the same bytes.
func TestHelpGolden(t *testing.T) {
	golden.Check(t, filepath.Join("testdata", "help.txt"), []byte(Help(terminalWidth)))
}

// helpOption is one action as a reader of argparse's help sees it.
type helpOption struct {
	opts    []string
	args    string // what follows each option string: "" for a flag, "N", "N [N ...]", "[N ...]", "[N]"
	choices []string
}

var invocationPart = regexp.MustCompile(`^(-{1,2}[A-Za-z0-9][-A-Za-z0-9_]*)(?: (\S+(?: \[\S+ \.\.\.\])?|\[\S+ \.\.\.\]|\[\S+\]))?$`)

// readHelp reads argparse's help as a parser of real SGLang help would:
// under "options:", a line indented by two spaces and starting with '-' is
// an action's invocation; its help follows, on the same line after two
// spaces or indented on the next ones.
func readHelp(t *testing.T, help string) []helpOption {
	t.Helper()
	_, body, ok := strings.Cut(help, "\noptions:\n")
	if !ok {
		t.Fatal("no options: section")
	}
	var out []helpOption
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		inv, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		var o helpOption
		for _, part := range strings.Split(inv, ", ") {
			m := invocationPart.FindStringSubmatch(part)
			if m == nil {
				t.Fatalf("unreadable invocation %q", inv)
			}
			o.opts = append(o.opts, m[1])
			o.args = m[2]
		}
		if mv := strings.Trim(strings.Fields(o.args + " x")[0], "[]"); strings.HasPrefix(mv, "{") {
			o.choices = strings.Split(strings.Trim(mv, "{}"), ",")
		}
		out = append(out, o)
	}
	return out
}

// TestHelpRoundTrip: the help parses back to the table: every action not
// hidden, in order, with its option strings, value and choices; and each
// option string read back is one the sim accepts.
func TestHelpRoundTrip(t *testing.T) {
	read := readHelp(t, Help(terminalWidth))
	var want []*flagSpec
	for _, f := range flagTable() {
		if !f.hidden {
			want = append(want, f)
		}
	}
	if len(read) != len(want) {
		t.Fatalf("help lists %d actions, the table has %d", len(read), len(want))
	}
	for i, f := range want {
		got := read[i]
		if !slices.Equal(got.opts, f.optionStrings()) || got.args != args(f) || !slices.Equal(got.choices, f.choices) {
			t.Errorf("action %d read back as %+v, table has %v", i, got, f.names)
		}
		for _, o := range got.opts {
			if optionIndex()[o] != f {
				t.Errorf("%s from the help is not the table's", o)
			}
		}
	}
	// What a campaign is checked against: today's spellings, the deprecated
	// ones, and the sim's own knobs are all listed.
	listed := map[string]bool{}
	for _, o := range read {
		for _, s := range o.opts {
			listed[s] = true
		}
	}
	for _, s := range []string{"--cuda-graph-max-bs-decode", "--cuda-graph-max-bs-prefill", "--flashinfer-allreduce-fusion-backend",
		"--enforce-disable-flashinfer-allreduce-fusion", "--disable-overlap-schedule", "--cuda-graph-max-bs",
		"--enable-flashinfer-allreduce-fusion", "--speculative-algorithm", "--stream-interval", "--sim-speed", "--sim-fault"} {
		if !listed[s] {
			t.Errorf("%s is not in the help", s)
		}
	}
	if listed["--sim-child-rank"] {
		t.Error("the children's internal flags are listed")
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"a b  c", 10, []string{"a b c"}},
		{"Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.", 54,
			[]string{"Deprecated. Use --cuda-graph-", "backend-{decode,prefill}=disabled instead."}},
		{"an Ornstein-Uhlenbeck process", 17, []string{"an Ornstein-", "Uhlenbeck process"}},
		{"top-1 x", 4, []string{"top-", "1 x"}},
	}
	for _, tt := range tests {
		if got := wrapText(tt.text, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}
