package orchestrator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCampaignServerClosesConnections runs `bakeoff run` on a campaign whose
// servers close their kept-alive connections: one after every streamed
// answer, as llama.cpp's llama-server does, one when a connection sat idle
// (the sim's close-after-stream and idle-close faults). The campaign
// completes with no failed request, the records count the requests sent
// again on a new connection, the level lines show them, and the verdict's
// notes name both servers.
func TestCampaignServerClosesConnections(t *testing.T) {
	w := newWorld(t)
	w.scenario("closes", "", "sim-fault: close-after-stream")
	// The warm-up at C=4 leaves four connections; level C=1 uses one and
	// takes longer than 10 ms, so C=4 finds the other three closed.
	w.scenario("idle", "closes", "sim-fault: idle-close=10ms")
	cfg := fmt.Sprintf(`campaign: conn
host: local
engine:
  command: [%q, "sim", "--sim-speed", "200", "--sim-load-time", "20s"]
  port: %d
  health_timeout: 30s
  poll_interval: 100ms
  stop_grace: 5s
gpu:
  max_used_mib: 1024
  wait_timeout: 10s
sweep:
  concurrency: [1, 4]
  requests: 12
  max_tokens: 32
  warmup: 4
baseline: closes
scenarios: [closes, idle]
rounds: 1
`, "{bakeoff}", w.port)
	w.config = filepath.Join(w.root, "configs", "conn.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out) + w.detail(dir)
	run := readSummary(t, dir)
	for _, name := range []string{"closes", "idle"} {
		if s := scenarioResult(t, run, name); s.Status != results.StatusOK {
			t.Fatalf("%s: %s %s\n%s", name, s.Status, s.Reason, text)
		}
		recs := readRecords(t, filepath.Join(dir, name, "round-1", results.RequestsFile))
		if len(recs) != 4+2*12 {
			t.Errorf("%s: %d records, want 28", name, len(recs))
		}
		retried := 0
		for _, r := range recs {
			if !r.OK() {
				t.Errorf("%s: request failed: %s %s", name, r.ErrClass, r.Error)
			}
			if r.ConnRetries > 0 {
				retried++
			}
		}
		if retried == 0 {
			t.Errorf("%s: no request was sent again, yet the server closes its connections", name)
		}
		note := fmt.Sprintf("%s: the server closes its kept-alive connections (after each answer, as llama.cpp's llama-server does, or when idle): %d of %d requests found theirs closed",
			name, retried, len(recs))
		if !strings.Contains(text, note) {
			t.Errorf("the run's output does not say %q:\n%s", note, text)
		}
	}
	if !strings.Contains(text, "conn retries: ") {
		t.Errorf("no level line counts the retries:\n%s", text)
	}
}
