package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestLaunchesSideBySide runs two rounds of a TP 1 comparison at once on
// this machine, each in a slot of its own: its GPU and its port, its pid
// files, logs and sweep apart from the other's, each round whole in its
// slot. Each slot waits for its own GPU's memory to be free, and only its
// own: the sim holds its memory on the GPUs CUDA_VISIBLE_DEVICES lists, so
// a wait that covered the other slot's GPU would wait out that slot's
// launch, and the rounds would not overlap.
func TestLaunchesSideBySide(t *testing.T) {
	w := newWorld(t)
	for _, name := range []string{"a", "b"} {
		extra := ""
		if name == "b" {
			extra = "  max-running-requests: 32\n"
		}
		text := fmt.Sprintf("name: %s\nengine: sglang\nmodel: /models/test\nargs:\n  tp: 1\n  enable-metrics: true\n%sdeployment:\n  roles:\n    server: {gpus: 1}\n", name, extra)
		if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := w.writeConfig(campaignOpts{scenarios: []string{"a", "b"}, rounds: 2, speed: 20, requests: 16})
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("launches_per_host: 2\n")
	f.Close()
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPortsFree(t, w.port, w.port+100)
	run := readSummary(t, out.RunDir)
	slotOf := map[int]string{}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK {
			t.Fatalf("%s round %d: %s at %s: %s\n%s", s.Name, s.Round, s.Status, s.FailedPhase, s.Reason, s.LogExcerpt)
		}
		if prev, ok := slotOf[s.Round]; ok && prev != s.HostName {
			t.Errorf("round %d ran in %s and %s: a round runs whole in one slot", s.Round, prev, s.HostName)
		}
		slotOf[s.Round] = s.HostName
		want := map[string]string{"local/slot1": fmt.Sprintf("CUDA_VISIBLE_DEVICES=0 %s", ""), "local/slot2": "CUDA_VISIBLE_DEVICES=1 "}[s.HostName]
		port := map[string]int{"local/slot1": w.port, "local/slot2": w.port + 100}[s.HostName]
		if want == "" || !strings.Contains(s.Launch, want) || !strings.Contains(s.Launch, fmt.Sprintf("--port %d ", port)) {
			t.Errorf("%s round %d in %q: %s", s.Name, s.Round, s.HostName, s.Launch)
		}
	}
	if slotOf[1] == slotOf[2] {
		t.Errorf("both rounds ran in %s; want one in each slot", slotOf[1])
	}
	// The two rounds ran at the same time: each slot's first launch
	// started before the other's last one ended.
	var starts, ends = map[int][]string{}, map[int][]string{}
	for _, e := range journal(t, out.RunDir) {
		if e.Phase == orchestrator.PhaseScenario {
			k := e.Round
			if e.Event == "start" {
				starts[k] = append(starts[k], e.Time.Format("15:04:05.000"))
			} else {
				ends[k] = append(ends[k], e.Time.Format("15:04:05.000"))
			}
		}
	}
	if !(starts[1][0] < ends[2][len(ends[2])-1] && starts[2][0] < ends[1][len(ends[1])-1]) {
		t.Errorf("the rounds did not overlap: starts %v, ends %v", starts, ends)
	}
}
