package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// TestPreflightCapturedHelps: the preflight against each engine's help as
// its build prints it (preflight/testdata), through a stand-in engine that
// prints the help when asked and records any other start: flags the
// engine would refuse in the last scenario stop the campaign before the
// stand-in is ever started as a server, each named at its line; deprecated
// ones are warnings.
func TestPreflightCapturedHelps(t *testing.T) {
	tests := []struct {
		engine, fixture, model string
		good, bad              string // args of the first and the last scenario
		errors, warnings       []string
	}{
		{"sglang", "sglang-help.txt", "/models/m",
			"  tp-size: 2\n", "  cuda-graph-max: 128\n  enable-flashinfer-allreduce-fusion: true\n",
			// argparse takes a unique prefix only: --cuda-graph-max is four
			// of SGLang's options.
			[]string{":4:3: scenario b: ambiguous option: --cuda-graph-max could match --cuda-graph-max-bs, --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill, --cuda-graph-max-seq-len-prefill"},
			[]string{":5:3: scenario b: --enable-flashinfer-allreduce-fusion is deprecated; use --flashinfer-allreduce-fusion-backend=auto"}},
		{"vllm", "vllm-help.txt", "/models/m",
			"  max_num_seqs: 8\n  speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'\n  speculative-config.prompt_lookup_max: 4\n", "  max-num-seq: 8\n  per-request-spec-decode-metrics: all\n  num-redundant-experts: 2\n",
			[]string{
				// argparse takes a unique prefix: --max-num-seq is --max-num-seqs.
				":5:3: scenario b: invalid choice for --per-request-spec-decode-metrics: \"all\" (choose from none, summary, detailed)",
			},
			[]string{":6:3: scenario b: --num-redundant-experts is deprecated"}},
		{"trtllm", "trtllm-serve-help.txt", "meta-llama/Llama-3.1-8B-Instruct",
			"  tp_size: 1\n  backend: pytorch\n", "  max-batch-size: 64\n  trust_remote_code: \"yes\"\n",
			[]string{
				":4:3: scenario b: unknown flag --max-batch-size; the closest it accepts is --max_batch_size",
				":5:3: scenario b: --trust_remote_code takes no value, but \"yes\" follows it",
			}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			w := newWorld(t)
			fixture, err := filepath.Abs(filepath.Join("..", "preflight", "testdata", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			started := filepath.Join(w.root, "started")
			engine := filepath.Join(w.root, "bin", "fake-"+tt.engine)
			script := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in --help|--help=*) exec cat %q;; esac; done\necho \"$@\" >> %q\nexit 1\n", fixture, started)
			if err := os.WriteFile(engine, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			scen := func(name, body string) {
				if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			scen("a", fmt.Sprintf("name: a\nengine: %s\nmodel: %s\nargs:\n%s", tt.engine, tt.model, tt.good))
			scen("b", "name: b\nextends: a\nargs:\n"+tt.bad)
			w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, noGPU: true})
			cfg, _ := os.ReadFile(w.config)
			cfg = []byte(strings.Replace(string(cfg), fmt.Sprintf("command: [%q, \"sim\", \"--sim-speed\", \"200\", \"--sim-load-time\", \"20s\"]", "{bakeoff}"),
				fmt.Sprintf("command: [%q]", engine), 1))
			if err := os.WriteFile(w.config, cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			_, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
			var pf *orchestrator.PreflightError
			if !errors.As(err, &pf) {
				t.Fatalf("got %v, want a preflight error", err)
			}
			b := filepath.Join(w.scenDir, "b.yaml")
			if len(pf.Problems) != len(tt.errors) {
				t.Errorf("%d problems, want %d:\n%s", len(pf.Problems), len(tt.errors), strings.Join(pf.Problems, "\n"))
			}
			for i, want := range tt.errors {
				if i < len(pf.Problems) && !strings.HasPrefix(pf.Problems[i], b+want) {
					t.Errorf("problem %d:\n  %s\nwant\n  %s%s", i, pf.Problems[i], b, want)
				}
			}
			for _, want := range tt.warnings {
				found := false
				for _, e := range events {
					found = found || e.Kind == orchestrator.EventWarning && strings.HasPrefix(e.Message, b+want)
				}
				if !found {
					t.Errorf("no warning %s%s", b, want)
				}
			}
			// What the user reads, the test's directory written ROOT.
			golden.Check(t, filepath.Join("testdata", "preflight-"+tt.engine+".golden"),
				[]byte(strings.ReplaceAll(err.Error(), w.root, "ROOT")+"\n"))
			if data, err := os.ReadFile(started); err == nil {
				t.Errorf("the engine was started: %s", data)
			}
			checkNothingLaunched(t, filepath.Join(w.root, "run"))
		})
	}
}
