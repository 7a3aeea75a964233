package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// The command line as the process answers it: the exit status and words
// of a refused flag and of --help (package cmdline has the parser).

// TestRefusedFlagsProcess: the whole command refuses what SGLang's argparse
// refuses, with the usage and argparse's words on stderr and exit status 2,
// before starting anything.
func TestRefusedFlagsProcess(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown", []string{"--tp", "8", "--cuda-graph-max-bz", "128"}, "sglang serve: error: unrecognized arguments: --cuda-graph-max-bz 128"},
		{"removed", []string{"--tp", "8", "--enable-ep-moe"}, "sglang serve: error: unrecognized arguments: --enable-ep-moe"},
		{"ambiguous", []string{"--cuda-graph-max", "128"}, "sglang serve: error: ambiguous option: --cuda-graph-max could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill, --cuda-graph-max-seq-len-prefill, --cuda-graph-max-bs"},
		{"bad choice", []string{"--cuda-graph-backend-decode", "eager"}, "sglang serve: error: argument --cuda-graph-backend-decode: invalid choice: 'eager' (choose from 'full', 'breakable', 'tc_piecewise', 'disabled')"},
		{"bad choice of a flag the sim does not model", []string{"--moe-a2a-backend", "deepep3"}, "sglang serve: error: argument --moe-a2a-backend: invalid choice: 'deepep3' (choose from 'none', 'deepep', 'mooncake', 'nixl', 'mori', 'ascend_fuseep', 'flashinfer', 'megamoe', 'deepep_v2', 'pplx', 'ascend_tp', 'flashinfer_megamoe')"},
		{"removed, with SGLang's reason", []string{"--enable-expert-distribution-metrics"}, "sglang serve: error: --enable-expert-distribution-metrics is no longer supported. Use --expert-balancedness-report-mode with one of: off, server_log, prometheus, both."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(simBinary, append([]string{"sim"}, tt.args...)...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2", err)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if !strings.HasPrefix(lines[0], "usage: sglang serve [-h] ") || lines[len(lines)-1] != tt.want || stdout.Len() != 0 {
				t.Errorf("stderr ends:\n%s\nwant the usage, then %q", simtest.Tail(stderr.String(), 3), tt.want)
			}
		})
	}
}

// TestUnmodelledFlagsStartProcess: flags SGLang accepts and the sim does
// not model start the server all the same, and /server_info reports them
// under their dests; a deprecated alias still in SGLang's parser starts it
// with SGLang's warning.
func TestUnmodelledFlagsStartProcess(t *testing.T) {
	p := startSim(t, nil, "--enable-symm-mem", "--moe-a2a-backend", "deepep", "--speculative-attention-mode", "decode",
		"--num-reserved-decode-tokens", "8", "--no-dllm-fdfo", "--cuda-graph-max-bs", "8")
	p.waitHealthy()
	resp, err := http.Get(p.url("/server_info"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"enable_symm_mem": true, "moe_a2a_backend": "deepep", "speculative_attention_mode": "decode",
		"num_reserved_decode_tokens": 8.0, "dllm_fdfo": false, "cuda_graph_max_bs_decode": 8.0}
	for k, v := range want {
		if info[k] != v {
			t.Errorf("/server_info %s = %v, want %v", k, info[k], v)
		}
	}
	if log := p.log.String(); !strings.Contains(log, "'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-max-bs-decode' instead.") {
		t.Errorf("no deprecation warning in the log:\n%s", simtest.Tail(log, 5))
	}
}

// TestHelpProcess: `bakeoff sim --help` prints the help on stdout, exit 0,
// as argparse does, at $COLUMNS when set.
func TestHelpProcess(t *testing.T) {
	for _, cols := range []string{"", "120"} {
		cmd := exec.Command(simBinary, "sim", "--port", "1", "--help")
		cmd.Env = append(os.Environ(), "COLUMNS="+cols)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("COLUMNS=%q: %v", cols, err)
		}
		want := cmdline.Help(cmdline.Columns(func(string) string { return cols }))
		if string(out) != want {
			t.Errorf("COLUMNS=%q: stdout differs from Help:\n%s", cols, golden.FirstDifference([]byte(want), out))
		}
	}
}
