package orchestrator_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// TestDryRun: --dry-run prints, per scenario, the stop (the stop script's
// SIGTERM and SIGKILL to the process group, under the condition a live
// host sends it on), the GPU query, the launch with its environment, the
// health URL and the sweep, and at the end the lock's release; and runs
// nothing: no process, no results, no workdir.
func TestDryRun(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "", "sim-fault: hang-during-load")
	w.scenario("b", "a", "sim-fault: null")
	w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}})
	out, err := w.bakeoff("run", w.config, "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"nothing is executed on any host",
		"### a: launch 1 of 2 (#a-1)", "### b: launch 2 of 2 (#b-1)",
		"\nstop-old\n", "server.pid is left from an earlier run and names a running process group:",
		`kill -s TERM -- "-$g"`, `kill -s KILL -- "-$g"`,
		"nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader,nounits",
		"/server.pid, output to ", "#   env -- ", bakeoffBin + " sim --sim-speed 200", "--sim-fault hang-during-load",
		"GET http://127.0.0.1:",
		"#   umask 077; " + bakeoffBin + " sweep --url http://127.0.0.1:",
		"# if the lock still names this run:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("dry run does not show %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "/server.pid, output to ") != 2 {
		t.Errorf("want one launch per scenario:\n%s", text)
	}
	for _, p := range []string{filepath.Join(w.root, "results"), filepath.Join(w.root, "tmp", "bakeoff-local-"+itoa(os.Getuid()))} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the dry run created %s", p)
		}
	}
}

// launchHeading is a launch's heading in a dry run.
var launchHeading = regexp.MustCompile(`(?m)^### \S+: launch \d+ of \d+`)

// TestDryRunShippedConfig: the seeds' real campaign shows the launch
// commands of its three scenarios once, in round 1, and names them in every
// other round (they differ only in the round), without contacting its SSH
// host.
func TestDryRunShippedConfig(t *testing.T) {
	w := newWorld(t)
	cfg, err := filepath.Abs(filepath.Join("..", "configs", "rtx6000-kimi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.bakeoff("run", cfg, "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	if n, want := len(launchHeading.FindAllString(text, -1)), 3*campaign.DefaultRounds; n != want {
		t.Errorf("%d launches, want %d:\n%s", n, want, text)
	}
	if n := strings.Count(text, "\n  #   env -- "); n != 3 {
		t.Errorf("%d launch commands shown, want 3 (round 1's):\n%s", n, text)
	}
	if n, want := strings.Count(text, ": the commands of #"), 3*(campaign.DefaultRounds-1); n != want {
		t.Errorf("%d launches name round 1's, want %d:\n%s", n, want, text)
	}
	if !strings.Contains(text, "-m sglang.launch_server") || !strings.Contains(text, "--cuda-graph-max-bs-decode 128") {
		t.Errorf("launches are not SGLang's:\n%s", text)
	}
}

// TestDryRunOtherEngines: the llama.cpp and TensorRT-LLM examples show their
// own launchers, their health calls, and a sweep that knows its engine.
func TestDryRunOtherEngines(t *testing.T) {
	tests := []struct {
		config string
		want   []string
		never  []string // what the dry run must not show
	}{
		{"llamacpp.yaml", []string{
			"#   env -- BAKEOFF_LAUNCH=0 BAKEOFF_ROUND=1 llama-server --model /models/Qwen3-8B-Q4_K_M.gguf --host 127.0.0.1 --port 8080",
			"--spec-type draft-simple", "--slot-save-path /tmp/bakeoff/llama-slots",
			"GET http://127.0.0.1:8080/health",
			" sweep --url http://127.0.0.1:8080 --engine llamacpp ",
			"GET http://127.0.0.1:8080/props",
		}, nil},
		{"trtllm-h200.yaml", []string{
			"#   env -- BAKEOFF_LAUNCH=0 BAKEOFF_ROUND=1 trtllm-serve meta-llama/Llama-3.1-8B-Instruct --host 127.0.0.1 --port 8000 --backend pytorch",
			"--config /data/trtllm/eagle3.yaml",
			" sweep --url http://127.0.0.1:8000 --engine trtllm ", " --unique-prompts ",
			"GET http://127.0.0.1:8000/version",
		}, nil},
		// A host without a GPU: no GPU wait, facts or power sampler.
		{"llamacpp-cpu.yaml", []string{
			"no GPU (gpu: none)",
			"#   env -- BAKEOFF_LAUNCH=0 BAKEOFF_ROUND=1 llama-server --model /models/Qwen3-0.6B-Q8_0.gguf --host 127.0.0.1 --port 8080",
			"--n-gpu-layers 0", "--threads 2",
			// The slot directory, under the host's workdir, made before the launch.
			"--slot-save-path /tmp/bakeoff/llama-slots", "&& mkdir -p /tmp/bakeoff/llama-slots",
		}, []string{"nvidia-smi", "\ngpu-free", "power.pid"}},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			w := newWorld(t)
			cfg, err := filepath.Abs(filepath.Join("..", "configs", tt.config))
			if err != nil {
				t.Fatal(err)
			}
			out, err := w.bakeoff("run", cfg, "--dry-run").CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			text := string(out)
			c, err := campaign.Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// A dry run has no measurements to look at: a sequential
			// campaign shows every round up to rounds.max.
			if n, want := len(launchHeading.FindAllString(text, -1)), 2*c.Rounds; n != want {
				t.Errorf("%d launches, want %d (two scenarios in every round):\n%s", n, want, text)
			}
			if n := strings.Count(text, "\n  #   env -- "); n != 2 {
				t.Errorf("%d launch commands shown, want 2 (round 1's):\n%s", n, text)
			}
			for _, want := range tt.want {
				if !strings.Contains(text, want) {
					t.Errorf("dry run does not show %q:\n%s", want, text)
				}
			}
			for _, never := range tt.never {
				if strings.Contains(text, never) {
					t.Errorf("dry run shows %q:\n%s", never, text)
				}
			}
		})
	}
}
