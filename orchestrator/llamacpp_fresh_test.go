package orchestrator_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestShippedLlamaCppCPUOnFreshHost runs the shipped CPU example as a new
// user would: configs/llamacpp-cpu.yaml and its scenarios, changed only to
// run here (host: local, a free port), to find llama-server (a stand-in
// that, like the real one, refuses a --slot-save-path that is no
// directory) and the model, on a host whose workdir does not exist yet.
// Every launch must get past ready.
func TestShippedLlamaCppCPUOnFreshHost(t *testing.T) {
	w := newWorld(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(w.root, "bin", "llama-server")); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, llamatest.Env+"=1")
	model := filepath.Join(w.root, "Qwen3-0.6B-Q8_0.gguf")
	for _, name := range []string{"llamacpp-cpu-a", "llamacpp-cpu-b"} {
		body := readRepoFile(t, "scenarios", name+".yaml")
		body = strings.ReplaceAll(body, "/models/Qwen3-0.6B-Q8_0.gguf", model)
		if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := readRepoFile(t, "configs", "llamacpp-cpu.yaml")
	cfg = regexp.MustCompile(`(?m)^host:\n(  .*\n)+`).ReplaceAllString(cfg, "host: local\n")
	cfg = strings.Replace(cfg, "port: 8080", "port: "+strconv.Itoa(w.port), 1)
	// One round of a short sweep is enough to see every launch start: the
	// shipped sequential rounds and 40 requests a level took minutes here.
	cfg = regexp.MustCompile(`(?m)^rounds: .*$`).ReplaceAllString(cfg, "rounds: 1")
	cfg = regexp.MustCompile(`(?m)^  requests: \d+$`).ReplaceAllString(cfg, "  requests: 8")
	cfg = regexp.MustCompile(`(?m)^  max_tokens: \d+$`).ReplaceAllString(cfg, "  max_tokens: 16")
	if !strings.Contains(cfg, "host: local\n") || strings.Contains(cfg, "ssh:") ||
		!strings.Contains(cfg, "\nrounds: 1\n") || !strings.Contains(cfg, "  requests: 8\n") || !strings.Contains(cfg, "  max_tokens: 16\n") {
		t.Fatalf("the shipped config changed shape; update this test:\n%s", cfg)
	}
	w.config = filepath.Join(w.root, "configs", "llamacpp-cpu.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	workdir := filepath.Join(w.root, "tmp", campaign.LocalWorkdirPrefix+strconv.Itoa(os.Getuid()))
	if _, err := os.Stat(workdir); !os.IsNotExist(err) {
		t.Fatalf("the workdir %s is there before the run: %v", workdir, err)
	}
	out, err := w.bakeoff("run", w.config, "--out", filepath.Join(w.root, "run")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := readSummary(t, filepath.Join(w.root, "run"))
	for _, name := range []string{"llamacpp-cpu-a", "llamacpp-cpu-b"} {
		s := scenarioResult(t, run, name)
		if s.Status != results.StatusOK {
			t.Errorf("%s: %s at %s: %s\n%s", name, s.Status, s.FailedPhase, s.Reason, out)
		}
		if want := "--slot-save-path " + filepath.Join(workdir, "llama-slots"); !strings.Contains(s.Launch, want) {
			t.Errorf("%s launched as %s, want %s", name, s.Launch, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(workdir, "llama-slots")); err != nil || !fi.IsDir() {
		t.Errorf("the slot directory was not created: %v", err)
	}
}

// readRepoFile reads a file the repository ships, from the module root.
func readRepoFile(t *testing.T, elem ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{".."}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
