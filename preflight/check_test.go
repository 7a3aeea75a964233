package preflight

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// TestCheck: each engine's parser's verdict on command lines, from the
// fixtures: what it refuses, what it warns about, and the spelling it would
// take instead.
func TestCheck(t *testing.T) {
	tests := []struct {
		name         string
		file, format string
		underscores  bool
		words        string
		want         []string // "severity kind word flag suggest", in order
	}{
		{"sglang shipped baseline", "sglang-help.txt", engine.HelpArgparse, false,
			"--attention-backend flashinfer --cuda-graph-max-bs 128 --disable-custom-all-reduce --enable-flashinfer-allreduce-fusion --enable-metrics --max-running-requests 256 --tp 8 --trust-remote-code",
			[]string{
				// SGLang still registers --cuda-graph-max-bs as a deprecated
				// alias (server_args.py, ServerArgs.add_cli_args).
				"warning deprecated 2 --cuda-graph-max-bs --cuda-graph-max-bs-decode",
				"warning deprecated 5 --enable-flashinfer-allreduce-fusion --flashinfer-allreduce-fusion-backend",
			}},
		{"sglang today's spellings", "sglang-help.txt", engine.HelpArgparse, false,
			"--attention-backend flashinfer --cuda-graph-max-bs-decode 128 --flashinfer-allreduce-fusion-backend auto --tp-size 8 --cuda-graph-bs-decode 1 2 4 --enable-dsa-fused-indexer --no-enable-dsa-fused-indexer",
			nil},
		{"sglang unknown with a near spelling", "sglang-help.txt", engine.HelpArgparse, false,
			"--speculative-eagle-top-k 4",
			[]string{"error unknown 0 --speculative-eagle-top-k --speculative-eagle-topk"}},
		{"sglang bad choice", "sglang-help.txt", engine.HelpArgparse, false,
			"--attention-backend flashinfr --flashinfer-allreduce-fusion-backend=none",
			[]string{"error bad-choice 0 --attention-backend flashinfer", "error bad-choice 2 --flashinfer-allreduce-fusion-backend "}},
		{"sglang a flag given a value", "sglang-help.txt", engine.HelpArgparse, false,
			"--trust-remote-code yes --enable-metrics=true",
			[]string{"error takes-no-value 0 --trust-remote-code ", "error takes-no-value 2 --enable-metrics "}},
		{"sglang a value missing, a stray word", "sglang-help.txt", engine.HelpArgparse, false,
			"stray --port",
			[]string{"error stray-value 0 stray ", "error needs-value 1 --port "}},
		{"argparse: a negative number is a value", "sglang-help.txt", engine.HelpArgparse, false,
			"--port -1", nil},
		{"vllm underscores and dotted JSON keys", "vllm-help.txt", engine.HelpArgparse, true,
			"--max_num_seqs 64 --speculative-config.method eagle -tp 2 --enable-prefix-caching --per-request-spec-decode-metrics summary",
			nil},
		{"vllm deprecated, bad choice", "vllm-help.txt", engine.HelpArgparse, true,
			"--num-redundant-experts 2 --per-request-spec-decode-metrics all",
			[]string{"warning deprecated 0 --num-redundant-experts ", "error bad-choice 2 --per-request-spec-decode-metrics "}},
		// vLLM's --tool-call-parser lists its built-in parsers in a metavar
		// of its own, not choices=: a plugin's parser is valid, argparse
		// checks nothing. --load-format's Python list is a metavar too.
		// --dtype's and --uvicorn-log-level's braces are argparse's own:
		// closed.
		{"vllm open choices: a plugin's tool parser", "vllm-choices-help.txt", engine.HelpArgparse, true,
			"--enable-auto-tool-choice --tool-call-parser my_plugin_parser --tool-parser-plugin /opt/parsers/mine.py",
			[]string{"warning bad-choice 1 --tool-call-parser "}},
		{"vllm open choices: listed ones", "vllm-choices-help.txt", engine.HelpArgparse, true,
			"--tool_call_parser=hermes --tokenizer-mode mistral --load-format safetensors", nil},
		{"vllm open choices: a typo is said, not refused", "vllm-choices-help.txt", engine.HelpArgparse, true,
			"--tool-call-parser hermess --load-format my_loader",
			[]string{"warning bad-choice 0 --tool-call-parser hermes", "warning bad-choice 2 --load-format "}},
		{"vllm closed choices: a typo is refused", "vllm-choices-help.txt", engine.HelpArgparse, true,
			"--tool-call-parser my_plugin_parser --dtype bfloat61 --uvicorn-log-level verbose",
			[]string{"warning bad-choice 0 --tool-call-parser ", "error bad-choice 2 --dtype bfloat16", "error bad-choice 4 --uvicorn-log-level "}},
		{"vllm open choices still take one value", "vllm-choices-help.txt", engine.HelpArgparse, true,
			"--tokenizer-mode", []string{"error needs-value 0 --tokenizer-mode "}},
		{"llama.cpp removed draft flag", "llama-server-help.txt", engine.HelpLlamaCpp, false,
			"--draft-max 8 --n-gpu-layers 99 --spec-type draft-simple",
			[]string{"error removed 0 --draft-max --spec-draft-n-max"}},
		{"llama.cpp shipped cpu scenario", "llama-server-help.txt", engine.HelpLlamaCpp, false,
			"--alias qwen3-0.6b --cache-ram 0 --ctx-size 4096 --metrics --n-gpu-layers 0 --parallel 4 --slot-save-path /w/llama-slots --threads 2",
			nil},
		{"llama.cpp: '_' for '-', but no --name=value", "llama-server-help.txt", engine.HelpLlamaCpp, false,
			"--n_gpu_layers 99 --ctx-size=4096",
			[]string{"error unknown 2 --ctx-size=4096 --ctx-size"}},
		{"llama.cpp takes no abbreviation; choices", "llama-server-help.txt", engine.HelpLlamaCpp, false,
			"--ctx 4096 --flash-attn maybe -fa --cache-type-k q8_0",
			[]string{"error unknown 0 --ctx --ctx-size", "error bad-choice 2 --flash-attn "}},
		{"trtllm shipped scenario", "trtllm-serve-help.txt", engine.HelpClick, false,
			"--backend pytorch --extra_llm_api_options /data/x.yaml --max_batch_size 64 --max_num_tokens 8192 --tp_size 1",
			nil},
		{"trtllm dashes are not underscores", "trtllm-serve-help.txt", engine.HelpClick, false,
			"--max-batch-size 64 --backend trt",
			[]string{"error unknown 0 --max-batch-size --max_batch_size", "warning bad-choice 2 --backend "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := loadFixture(t, tt.file, tt.format)
			if tt.underscores {
				tab.Underscores, tab.JSONKeys = true, true
			}
			var got []string
			for _, f := range tab.Check(strings.Fields(tt.words)) {
				got = append(got, fmt.Sprintf("%s %s %d %s %s", f.Severity, f.Kind, f.Word, f.Flag, f.Suggest))
				if f.Text == "" {
					t.Errorf("finding without text: %+v", f)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestCheckText: the sentences a user reads, for the three that stop a
// campaign, and the warnings beside them.
func TestCheckText(t *testing.T) {
	sg := loadFixture(t, "sglang-help.txt", engine.HelpArgparse)
	ll := loadFixture(t, "llama-server-help.txt", engine.HelpLlamaCpp)
	vl := loadFixture(t, "vllm-choices-help.txt", engine.HelpArgparse)
	tests := []struct {
		tab   *Table
		words string
		want  string
	}{
		{sg, "--cuda-graph-max 8", "ambiguous option: --cuda-graph-max could match --cuda-graph-max-bs, --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill, --cuda-graph-max-seq-len-prefill"},
		{sg, "--cuda-graph-max-bs 8", "--cuda-graph-max-bs is deprecated; use --cuda-graph-max-bs-decode"},
		{sg, "--speculative-eagle-top-k 4", "unknown flag --speculative-eagle-top-k; the closest it accepts is --speculative-eagle-topk"},
		{sg, "--attention-backend flashinfr", `invalid choice for --attention-backend: "flashinfr"; the closest it accepts is flashinfer (choose from triton, torch_native, flex_attention, dsa, nsa, qsa, dsv4, compressed, fa3, fa4, … (25 in all))`},
		{ll, "--flash-attn maybe", `invalid choice for --flash-attn: "maybe" (choose from on, off, auto)`},
		{ll, "--draft-max 8", "--draft-max has been removed; use --spec-draft-n-max or --spec-ngram-mod-n-max"},
		{sg, "--enable-flashinfer-allreduce-fusion", "--enable-flashinfer-allreduce-fusion is deprecated; use --flashinfer-allreduce-fusion-backend=auto"},
		{vl, "--tool-call-parser my_plugin_parser", `"my_plugin_parser" is not among the values the help lists for --tool-call-parser (choose from deepseek_v3, hermes, llama3_json, mistral, pythonic, qwen3_coder); it may take others: its help adds "or name registered in --tool-parser-plugin"`},
		{vl, "--tokenizer-mode mistrall", `"mistrall" is not among the values the help lists for --tokenizer-mode; the closest listed is mistral (choose from auto, deepseek_v32, hf, mistral, slow); it may take others: its help lists them as a metavar (a Python list), which argparse does not check`},
		{vl, "--dtype bfloat61", `invalid choice for --dtype: "bfloat61"; the closest it accepts is bfloat16 (choose from auto, bfloat16, float, float16, float32, half)`},
	}
	for _, tt := range tests {
		fs := tt.tab.Check(strings.Fields(tt.words))
		if len(fs) != 1 || !strings.HasPrefix(fs[0].Text, tt.want) {
			t.Errorf("%s: got %+v, want %q", tt.words, fs, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct {
		s    string
		cand []string
		want string
	}{
		{"--tp-szie", []string{"--port", "--tp-size"}, "--tp-size"},
		{"--zzzzzzzzzz", []string{"--port", "--tp-size"}, ""},
		{"", []string{"a"}, ""},
	}
	for _, tt := range tests {
		if got := closest(tt.s, tt.cand); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
