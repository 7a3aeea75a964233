package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// fixtures are the help texts in testdata, each with the format its engine
// prints; their first lines say which build they are.
var fixtures = []struct {
	file, format string
}{
	{"sglang-help.txt", engine.HelpArgparse},
	{"vllm-help.txt", engine.HelpArgparse},
	{"vllm-choices-help.txt", engine.HelpArgparse},
	{"llama-server-help.txt", engine.HelpLlamaCpp},
	{"trtllm-serve-help.txt", engine.HelpClick},
}

func loadFixture(t testing.TB, file, format string) *Table {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(format, b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tab
}

// dump writes a table one option a line, for the golden files: what a
// reader checks against the help beside it.
func dump(t *Table) []byte {
	var b strings.Builder
	arity := map[Arity]string{NoValue: "flag", OneValue: "value", OptionalValue: "optional value", ManyValues: "values"}
	for _, o := range t.Options {
		fmt.Fprintf(&b, "%s: %s", strings.Join(o.Names, " "), arity[o.Arity])
		if o.Choices != nil {
			fmt.Fprintf(&b, " {%s}", strings.Join(o.Choices, ","))
		}
		if o.OpenChoices != "" {
			b.WriteString(" open: " + o.OpenChoices)
		}
		if o.Removed {
			fmt.Fprintf(&b, "; removed, use %q", o.Replacement)
		}
		if o.Deprecated {
			fmt.Fprintf(&b, "; deprecated, use %q", o.Replacement)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// TestParseFixtures: every fixture parses into the option table kept beside
// it (golden; go test -update rewrites them).
func TestParseFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			tab := loadFixture(t, f.file, f.format)
			golden.Check(t, filepath.Join("testdata", strings.TrimSuffix(f.file, ".txt")+".table"), dump(tab))
		})
	}
}

// TestParseOptions: what each format's layout says of single options.
func TestParseOptions(t *testing.T) {
	tests := []struct {
		file, format, name string
		names              []string
		arity              Arity
		choices            []string
		deprecated         bool
		removed            bool
		replacement        string
	}{
		// argparse, Python 3.11: the metavar after each spelling.
		{"sglang-help.txt", engine.HelpArgparse, "--model", []string{"--model-path", "--model"}, OneValue, nil, false, false, ""},
		{"sglang-help.txt", engine.HelpArgparse, "--trust-remote-code", []string{"--trust-remote-code"}, NoValue, nil, false, false, ""},
		{"sglang-help.txt", engine.HelpArgparse, "--cuda-graph-bs-decode", []string{"--cuda-graph-bs-decode"}, ManyValues, nil, false, false, ""},
		{"sglang-help.txt", engine.HelpArgparse, "--flashinfer-allreduce-fusion-backend", []string{"--flashinfer-allreduce-fusion-backend"}, OneValue,
			[]string{"auto", "trtllm", "mnnvl", "cutedsl"}, false, false, ""},
		{"sglang-help.txt", engine.HelpArgparse, "--enable-flashinfer-allreduce-fusion", []string{"--enable-flashinfer-allreduce-fusion"}, NoValue, nil,
			true, false, "--flashinfer-allreduce-fusion-backend=auto"},
		{"sglang-help.txt", engine.HelpArgparse, "--no-enable-dsa-fused-indexer", []string{"--enable-dsa-fused-indexer", "--no-enable-dsa-fused-indexer"}, NoValue, nil, false, false, ""},
		{"vllm-help.txt", engine.HelpArgparse, "-tp", []string{"--tensor-parallel-size", "-tp"}, OneValue, nil, false, false, ""},
		{"vllm-help.txt", engine.HelpArgparse, "--per-request-spec-decode-metrics", []string{"--per-request-spec-decode-metrics"}, OneValue,
			[]string{"none", "summary", "detailed"}, false, false, ""},
		{"vllm-help.txt", engine.HelpArgparse, "--num-redundant-experts", []string{"--num-redundant-experts"}, OneValue, nil, true, false, ""},
		{"vllm-help.txt", engine.HelpArgparse, "--override-pooler-config", []string{"--override-pooler-config"}, OneValue, nil, true, false, "pooler_config"},
		// llama.cpp: padded spellings, help at column 40 or below.
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--help", []string{"-h", "--help", "--usage"}, NoValue, nil, false, false, ""},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "-fa", []string{"-fa", "--flash-attn"}, OptionalValue, []string{"on", "off", "auto"}, false, false, ""},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--no-kv-offload", []string{"-kvo", "--kv-offload", "-nkvo", "--no-kv-offload"}, NoValue, nil, false, false, ""},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--cache-type-k", []string{"-ctk", "--cache-type-k"}, OneValue,
			[]string{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}, false, false, ""},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--split-mode", []string{"-sm", "--split-mode"}, OneValue, []string{"none", "layer", "row", "tensor"}, false, false, ""},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--draft-max", []string{"--draft", "--draft-n", "--draft-max"}, OneValue, nil,
			false, true, "--spec-draft-n-max or --spec-ngram-mod-n-max"},
		{"llama-server-help.txt", engine.HelpLlamaCpp, "--defrag-thold", []string{"-dt", "--defrag-thold"}, OneValue, nil, true, false, ""},
		// click: "[a|b]" choices, ", " aliases, flags without a type.
		{"trtllm-serve-help.txt", engine.HelpClick, "--tp_size", []string{"--tensor_parallel_size", "--tp_size"}, OneValue, nil, false, false, ""},
		{"trtllm-serve-help.txt", engine.HelpClick, "--backend", []string{"--backend"}, OneValue, []string{"pytorch", "tensorrt", "_autodeploy"}, false, false, ""},
		{"trtllm-serve-help.txt", engine.HelpClick, "--trust_remote_code", []string{"--trust_remote_code"}, NoValue, nil, false, false, ""},
		{"trtllm-serve-help.txt", engine.HelpClick, "--extra_llm_api_options", []string{"--config", "--extra_llm_api_options"}, OneValue, nil, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.name, func(t *testing.T) {
			o := loadFixture(t, tt.file, tt.format).Lookup(tt.name)
			if o == nil {
				t.Fatalf("no option %s", tt.name)
			}
			if !slices.Equal(o.Names, tt.names) || o.Arity != tt.arity || !slices.Equal(o.Choices, tt.choices) ||
				o.Deprecated != tt.deprecated || o.Removed != tt.removed || o.Replacement != tt.replacement {
				t.Errorf("got %+v", *o)
			}
		})
	}
}

// TestParseNotHelp: a text of another format, or no help at all, is
// ErrNotHelp, so a wrapper's own usage is told apart from an engine's.
func TestParseNotHelp(t *testing.T) {
	goUsage := "bakeoff sim [SGLang flags] [--sim-… flags]\n\nSim knobs:\n  --sim-speed X   run faster\n"
	tests := []struct {
		format, text string
	}{
		{engine.HelpArgparse, goUsage},
		{engine.HelpArgparse, ""},
		{engine.HelpClick, goUsage},
		{engine.HelpLlamaCpp, "Traceback (most recent call last):\nModuleNotFoundError: No module named 'sglang'\n"},
		{engine.HelpArgparse, "usage: x\n\nno options here\n"},
	}
	for _, tt := range tests {
		if _, err := Parse(tt.format, []byte(tt.text)); !errors.Is(err, ErrNotHelp) {
			t.Errorf("Parse(%s, %q) = %v, want ErrNotHelp", tt.format, tt.text, err)
		}
	}
	if _, err := Parse("yaml", nil); err == nil || errors.Is(err, ErrNotHelp) {
		t.Errorf("an unknown format: %v", err)
	}
}

// TestParsePython313: Python 3.13's argparse writes the metavar once, after
// the last spelling.
func TestParsePython313(t *testing.T) {
	help := "usage: sglang serve [-h]\n\noptions:\n  -h, --help            show this help message and exit\n" +
		"  --tp-size, --tensor-parallel-size TP_SIZE\n                        The tensor parallelism size.\n"
	tab, err := Parse(engine.HelpArgparse, []byte(help))
	if err != nil {
		t.Fatal(err)
	}
	if o := tab.Lookup("--tp-size"); o == nil || o.Arity != OneValue || len(o.Names) != 2 {
		t.Errorf("got %+v", o)
	}
}

// TestLlamaTestHelp: the stand-in llama-server of the tests answers --help
// with this very fixture.
func TestLlamaTestHelp(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("testdata", "llama-server-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "internal", "llamatest", "help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("internal/llamatest/help.txt differs from testdata/llama-server-help.txt; copy it over")
	}
}

// TestParseHyphenWrap: argparse's textwrap breaks a long flag name after a
// hyphen; the replacement the help names stays whole.
func TestParseHyphenWrap(t *testing.T) {
	help := "usage: sglang serve [-h]\n\noptions:\n" +
		"  --enable-flashinfer-allreduce-fusion\n" +
		"                        (Deprecated: use --flashinfer-allreduce-fusion-\n" +
		"                        backend=auto) Enable FlashInfer allreduce fusion.\n"
	tab, err := Parse(engine.HelpArgparse, []byte(help))
	if err != nil {
		t.Fatal(err)
	}
	if o := tab.Lookup("--enable-flashinfer-allreduce-fusion"); o == nil || !o.Deprecated || o.Replacement != "--flashinfer-allreduce-fusion-backend=auto" {
		t.Errorf("got %+v", o)
	}
}
