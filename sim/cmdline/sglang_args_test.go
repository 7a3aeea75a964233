package cmdline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// TestModelledInTable: every flag the sim models is in the generated table
// under its dest, with the kind and type its setter expects, on every
// action that stores into that dest (deprecated aliases included). When a
// regenerated table renames, drops or retypes one, this fails instead of the
// sim silently refusing a flag or misreading its value.
func TestModelledInTable(t *testing.T) {
	sg, err := parseSGLangArgs(sglangArgsTSV)
	if err != nil {
		t.Fatal(err)
	}
	for dest, m := range modelled {
		found := 0
		for _, f := range sg {
			if f.destName() != dest {
				continue
			}
			found++
			if f.kind != m.kind || f.typ != m.typ {
				t.Errorf("%s (%s): the table has kind %d type %q, the sim's setter expects kind %d type %q",
					dest, f.displayName(), f.kind, f.typ, m.kind, m.typ)
			}
		}
		if found == 0 {
			t.Errorf("modelled dest %s is not in sglang_args.tsv", dest)
		}
	}
}

// TestTableMatchesPreflightFixture: the sim's SGLang actions and the
// preflight's SGLang fixture, as the preflight parses it
// (preflight/testdata/sglang-help.table), agree flag for flag: option
// strings, how a value is taken, and closed choices. Both are written from
// sglang_args.tsv by `make sglang-args`; this fails when one was not.
func TestTableMatchesPreflightFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "preflight", "testdata", "sglang-help.table"))
	if err != nil {
		t.Fatal(err)
	}
	arity := map[flagKind]string{kindHelp: "flag", kindBool: "flag", kindBoolOpt: "flag", kindValue: "value",
		kindOptional: "optional value", kindList: "values", kindListStar: "values"}
	var want []string
	for _, f := range flagTable() {
		if f.sim || f.hidden {
			continue
		}
		line := strings.Join(f.optionStrings(), " ") + ": " + arity[f.kind]
		if f.choices != nil {
			line += " {" + strings.Join(f.choices, ",") + "}"
		}
		want = append(want, line)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		// The fixture's notes on deprecation are the preflight's reading of
		// the help text, not part of the parser's shape.
		line, _, _ = strings.Cut(line, "; ")
		got = append(got, line)
	}
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Fatalf("action %d: fixture has %q, the sim %q (run `make sglang-args`)", i, g, w)
			}
		}
	}
}

// TestSGLangFlagsAccepted: flags SGLang registers are taken with SGLang's
// checks whether or not the sim models them, and recorded under their dests.
func TestSGLangFlagsAccepted(t *testing.T) {
	tests := []struct {
		args  string
		given map[string]string
	}{
		{"--enable-symm-mem", map[string]string{"enable_symm_mem": "true"}},
		{"--moe-a2a-backend deepep", map[string]string{"moe_a2a_backend": "deepep"}},
		{"--speculative-attention-mode decode", map[string]string{"speculative_attention_mode": "decode"}},
		{"--num-reserved-decode-tokens 8", map[string]string{"num_reserved_decode_tokens": "8"}},
		{"--no-dllm-fdfo", map[string]string{"dllm_fdfo": "false"}},
		{"--dllm-fdfo", map[string]string{"dllm_fdfo": "true"}},
		{"--lora-paths", map[string]string{"lora_paths": ""}},
		{"--lora-paths a b=c --port 1", map[string]string{"lora_paths": "a b=c", "port": "1"}},
		{"--weight-loader-drop-cache-after-load --port 1", map[string]string{"weight_loader_drop_cache_after_load": "", "port": "1"}},
		{"--weight-loader-drop-cache-after-load model", map[string]string{"weight_loader_drop_cache_after_load": "model"}},
		{"--log-requests-level 03", map[string]string{"log_requests_level": "03"}},
		{"--ep 2 --tp 8", map[string]string{"ep_size": "2", "tp_size": "8"}},
		{"--context-bucket 32k", map[string]string{"cuda_graph_prefill_max_context": "32k"}},
		{"--reasoning-parser qwen3 --tool-call-parser auto", map[string]string{"reasoning_parser": "qwen3", "tool_call_parser": "auto"}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			c, err := ParseArgs(strings.Fields(tt.args), simtest.NoEnv)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.given {
				if got, ok := c.Given[k]; !ok || got != v {
					t.Errorf("Given[%s] = %q (%v), want %q", k, got, ok, v)
				}
			}
		})
	}
}

// TestSGLangFlagErrors: the checks argparse makes on flags the sim does not
// model, in argparse's and SGLang's words.
func TestSGLangFlagErrors(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{"--log-requests-level 5", "argument --log-requests-level: invalid choice: 5 (choose from 0, 1, 2, 3)"},
		{"--moe-a2a-backend deepep3", "argument --moe-a2a-backend: invalid choice: 'deepep3' (choose from 'none', "},
		{"--num-reserved-decode-tokens 0x10", "argument --num-reserved-decode-tokens: invalid int value: '0x10'"},
		{"--hicache-ratio 0x1p-2", "argument --hicache-ratio: invalid float value: '0x1p-2'"},
		{"--enable-symm-mem=1", "argument --enable-symm-mem: ignored explicit argument '1'"},
		{"--no-dllm-fdfo=1", "argument --dllm-fdfo/--no-dllm-fdfo: ignored explicit argument '1'"},
		{"--numa-node", "argument --numa-node: expected at least one argument"},
		{"--tool-call-parser my_parser", "argument --tool-call-parser: invalid choice: 'my_parser' (choose from 'auto', "},
		{"--enable-expert-distribution-metrics", "--enable-expert-distribution-metrics is no longer supported. Use --expert-balancedness-report-mode with one of: off, server_log, prometheus, both."},
		{"--speculative-dflash-draft-window-size x", "argument --speculative-dflash-draft-window-size: invalid int value: 'x'"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := ParseArgs(strings.Fields(tt.args), simtest.NoEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			_, last, _ := strings.Cut(err.Error(), "\nsglang serve: error: ")
			if !strings.HasPrefix(last, tt.want) {
				t.Errorf("error %q, want it to start %q", last, tt.want)
			}
		})
	}
}

// TestDeprecatedWarnings: the words of SGLang's deprecated actions
// (argparse_actions.py) as the parser prints them.
func TestDeprecatedWarnings(t *testing.T) {
	c, err := ParseArgs([]string{"--collect-tokens-histogram", "--stream-output", "--cuda-graph-max-bs", "8"}, simtest.NoEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"\x1b[1;33mThe command line argument '--collect-tokens-histogram' is deprecated and will be removed in future versions.\x1b[0m",
		"\x1b[1;33m'--stream-output' is deprecated and will be removed in a future release. Use '--incremental-streaming-output' instead.\x1b[0m",
		"\x1b[1;33m'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-max-bs-decode' instead.\x1b[0m",
	}
	if !slices.Equal(c.ParseWarnings, want) || c.CudaGraphMaxBS != 8 {
		t.Errorf("warnings %q, max bs %d", c.ParseWarnings, c.CudaGraphMaxBS)
	}
}

// TestConvertValue: Python's int() and float() and SGLang's
// human_readable_int, as the sim applies them to a value.
func TestConvertValue(t *testing.T) {
	tests := []struct {
		typ, in string
		want    any
		err     string
	}{
		{"int", "42", 42, ""},
		{"int", " -1_000 ", -1000, ""},
		{"int", "1__0", nil, "invalid int value: '1__0'"},
		{"int", "1.0", nil, "invalid int value: '1.0'"},
		{"int", "it's", nil, `invalid int value: "it's"`},
		{"float", "1e-3", 0.001, ""},
		{"float", ".5", 0.5, ""},
		{"float", "5.", 5.0, ""},
		{"float", "1_0.5", 10.5, ""},
		{"float", "0x10", nil, "invalid float value: '0x10'"},
		{"human_readable_int", "32k", 32000, ""},
		{"human_readable_int", "25.6k", 25600, ""},
		{"human_readable_int", "1Ki", 1024, ""},
		{"human_readable_int", "2Mi", 2 << 20, ""},
		{"human_readable_int", "262144", 262144, ""},
		{"human_readable_int", "1K", nil, "Invalid integer value: '1K'."},
		{"human_readable_int", "2.5Mi", nil, "Decimals are not allowed with IEC suffixes like 'Mi'. Use an integer IEC value such as '2Mi', or an SI value such as '2.5M'."},
		{"json.loads", "{", "{", ""},
	}
	for _, tt := range tests {
		got, err := convertValue(tt.typ, tt.in)
		switch {
		case tt.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s(%q): err %v, want %q", tt.typ, tt.in, err, tt.err)
			}
		case err != nil || got != tt.want:
			t.Errorf("%s(%q) = %v, %v; want %v", tt.typ, tt.in, got, err, tt.want)
		}
	}
}

// TestParseSGLangArgsRefuses: a malformed table is an error, not a sim
// that silently takes less than SGLang.
func TestParseSGLangArgsRefuses(t *testing.T) {
	header := strings.Join(tsvColumns, "\t") + "\n"
	help := "-h --help\tflag\thelp\t-\t-\t-\tn\tn\tshow this help message and exit\n"
	tests := []struct{ name, text, want string }{
		{"no header", help, "columns"},
		{"short line", header + help + "--x\tvalue\tx\n", "3 columns"},
		{"unknown kind", header + help + "--x\tmany\tx\tstr\t-\t-\tn\tn\th\n", `unknown kind "many"`},
		{"unknown deprecation", header + help + "--x\tflag\tx\t-\t-\t~\tn\tn\th\n", "unknown deprecation"},
		{"help not first", header + "--x\tflag\tx\t-\t-\t-\tn\tn\th\n", "-h/--help is not the first"},
	}
	for _, tt := range tests {
		if _, err := parseSGLangArgs(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
}
