package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestLinkDropDuringSweep cuts the network link to the host (a network
// namespace with its own sshd) while the sweep runs there. The sweep does not
// depend on the link: once it is back, the orchestrator reconnects, follows
// the sweep to its end and downloads every record.
func TestLinkDropDuringSweep(t *testing.T) {
	w := newWorld(t)
	h := testhost.New(t, testhost.WithNvidiaSMI(bakeoffBin))
	w.scenario("a", "")
	w.writeConfig(campaignOpts{
		scenarios: []string{"a"},
		host:      "host:\n  ssh: " + h.Alias + "\n  workdir: " + h.Workdir,
		speed:     5, requests: 24, maxTokens: 64,
	})
	conn, err := remote.DialSSH(context.Background(), remote.SSHOptions{
		Target: h.Alias, ConnectTimeout: 5 * time.Second,
		KeepaliveInterval: time.Second, KeepaliveMax: 2,
		Getenv: func(k string) string {
			if k == "HOME" {
				return h.Home
			}
			return ""
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	dir := filepath.Join(w.root, "run")
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			// The sweep writes its JSON events on the host; cut once it measures.
			ev, _ := os.ReadFile(filepath.Join(h.Workdir, "sweeps", "a", "events.log"))
			if strings.Contains(string(ev), `"level_start"`) {
				h.LinkDown()
				time.Sleep(5 * time.Second) // past the keepalive watchdog: the connection dies
				h.LinkUp()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{Host: conn, OutDir: dir})
	<-cut
	if err != nil {
		t.Fatal(err)
	}
	r := out.Results[0]
	if r.Status != results.StatusOK {
		t.Fatalf("a: %s at %s: %s\n%s", r.Status, r.FailedPhase, r.Reason, r.LogExcerpt)
	}
	recs, err := readSummary(t, dir).Records("a")
	if err != nil || len(recs) != 1+2*24 {
		t.Fatalf("%d records (%v), want every one of 49", len(recs), err)
	}
	for _, rec := range recs {
		if !rec.OK() {
			t.Errorf("a request failed while the link was down: %+v", rec)
			break
		}
	}
	// The server's timeline was written on the host through the cut and came
	// home with the sweep's other files: a scrape every second of the sweep.
	tl, _ := launchTimeline(t, dir, "a")
	if n := len(tl.Times); n < 2 || tl.Times[n-1]-tl.Times[0] < 4e9 {
		t.Errorf("timeline of %d scrapes over %.1f s: the cut's 5 s are missing", n, float64(tl.Times[max(n-1, 0)]-tl.Times[0])/1e9)
	}
	warned := false
	for _, e := range events {
		warned = warned || (e.Kind == orchestrator.EventWarning && e.Phase == "" && e.Scenario == "a")
	}
	if !warned {
		t.Log("note: the link came back before any call noticed it was gone")
	}
}
