package orchestrator_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// nodesRig is two namespace hosts joined to each other as a cluster's
// nodes are, reached from one HOME, each with the sim and its fake
// nvidia-smi, and a world whose campaign runs on them as a fleet.
type nodesRig struct {
	*world
	hosts   []*testhost.Host
	home    string
	workdir string
}

func newNodesRig(t *testing.T) *nodesRig {
	t.Helper()
	r := &nodesRig{world: newWorld(t)}
	for range 2 {
		r.hosts = append(r.hosts, testhost.New(t, testhost.WithNvidiaSMI(bakeoffBin)))
	}
	testhost.Connect(t, r.hosts[0], r.hosts[1])
	r.home = t.TempDir()
	for _, h := range r.hosts {
		if err := h.AddToHome(r.home); err != nil {
			t.Fatal(err)
		}
	}
	r.workdir = filepath.Join(t.TempDir(), "{host}")
	return r
}

// connect dials every host of the rig, as `bakeoff run` does for a fleet.
func (r *nodesRig) connect() []remote.Host {
	r.t.Helper()
	var out []remote.Host
	for _, h := range r.hosts {
		conn, err := remote.DialSSH(context.Background(), remote.SSHOptions{
			Target: h.Alias, ConnectTimeout: 5 * time.Second, KeepaliveInterval: time.Second, KeepaliveMax: 3,
			Getenv: func(k string) string {
				if k == "HOME" {
					return r.home
				}
				return ""
			},
		})
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { conn.Close() })
		out = append(out, conn)
	}
	return out
}

// ranksScenario writes one tp-2 model whose two ranks run on the two nodes
// (SGLang's --nnodes, --node-rank, --dist-init-addr). A rank whose peer
// died hangs for SGLang's --watchdog-timeout (300 simulated seconds) before
// it ends, as a real one does: the dead peer is found first.
func (r *nodesRig) ranksScenario(name string) {
	r.t.Helper()
	text := fmt.Sprintf(`name: %s
engine: sglang
model: /models/test
args:
  tp: 2
  enable-metrics: true
  max-running-requests: 64
deployment:
  roles:
    ranks:
      count: 2
      node: [0, 1]
      args:
        nnodes: "{count}"
        node-rank: "{index}"
        dist-init-addr: "{ranks.host}:{rendezvous}"
`, name)
	if err := os.WriteFile(filepath.Join(r.scenDir, name+".yaml"), []byte(text), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// config writes the campaign over the rig's two hosts.
func (r *nodesRig) config(o campaignOpts) {
	o.host = fmt.Sprintf("hosts: [%s, %s]\nhost:\n  workdir: %s\n  link_patience: 10s", r.hosts[0].Alias, r.hosts[1].Alias, r.workdir)
	r.writeConfig(o)
}

// nothingLeft waits for both hosts to hold no process but sshd, and kills
// (by pid, in the host's namespace) what a failing test left there.
func (r *nodesRig) nothingLeft() {
	r.t.Helper()
	for _, h := range r.hosts {
		if ps := r.leftOn(h); len(ps) > 0 {
			r.t.Errorf("processes left on %s: %+v", h.Alias, ps)
			for _, p := range ps {
				syscall.Kill(p.Pid, syscall.SIGKILL)
			}
		}
	}
}

// leftOn waits up to 10 s for h to hold no process but sshd and returns
// what it still holds then.
func (r *nodesRig) leftOn(h *testhost.Host) []testhost.Process {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps, err := h.Processes(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		if len(ps) == 0 || time.Now().After(deadline) {
			return ps
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDeploymentTwoNodes runs one model's two ranks on two hosts: launched
// on both, swept from the first, stopped on both; then the same campaign
// with rank 1 killed in the middle of a level, which fails that launch with
// rank 1's reason; then one interrupted while the ranks load. Nothing is
// left on either host after any of them.
func TestDeploymentTwoNodes(t *testing.T) {
	// Two namespace hosts and three campaigns on them: two minutes, run
	// with the campaign faults rather than in every make test.
	campaigntest.Need(t, "BAKEOFF_FAULTS", "campaigns over namespace hosts", "make faults; .ci/run does")
	r := newNodesRig(t)
	r.ranksScenario("ranks")
	r.scenario("single", "")

	t.Run("measured", func(t *testing.T) {
		r.config(campaignOpts{scenarios: []string{"single", "ranks"}, speed: 100, concurrency: "[2]"})
		out, _, err := r.runInProcess(context.Background(), orchestrator.Options{Hosts: r.connect(), OutDir: filepath.Join(r.root, "run1")})
		if err != nil {
			t.Fatal(err)
		}
		r.nothingLeft()
		for _, res := range out.Results {
			if res.Status != results.StatusOK {
				t.Fatalf("%s: %s at %s: %s\n%s", res.Name, res.Status, res.FailedPhase, res.Reason, res.LogExcerpt)
			}
		}
		run := readSummary(t, out.RunDir)
		s := scenarioResult(t, run, "ranks")
		a, b := r.hosts[0], r.hosts[1]
		for _, want := range []string{
			"ranks.0 on " + a.Alias + ": ", "--host " + a.IP + " ", "--dist-init-addr " + a.IP + ":5000", "--node-rank 0",
			"ranks.1 on " + b.Alias + ": ", "--host " + b.IP + " ", "--node-rank 1",
		} {
			if !strings.Contains(s.Launch, want) {
				t.Errorf("the launch lacks %q:\n%s", want, s.Launch)
			}
		}
		if len(s.Levels) != 1 {
			t.Errorf("ranks measured %d levels, want 1", len(s.Levels))
		}
		if len(out.Placements) != 1 || out.Placements[0].Host != a.Alias {
			t.Errorf("placements %+v, want round 1 on %s, the group's first host", out.Placements, a.Alias)
		}
		for _, n := range []string{"ranks.0", "ranks.1"} {
			if fi, err := os.Stat(filepath.Join(out.RunDir, "ranks", "round-1", "roles", n, results.ServerLog)); err != nil || fi.Size() == 0 {
				t.Errorf("no log of %s: %v", n, err)
			}
		}
		// The ranks' energy is both nodes' GPUs': rank 1's host has a log
		// of its own, one of power.json's nodes, and the level's power is
		// the sum; the single server's, on one host, has no node.
		var p measure.PowerLog
		if err := readJSONFile(filepath.Join(out.RunDir, "ranks", "round-1", results.PowerFile), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.GPUs) == 0 || len(p.Nodes) != 1 || p.Nodes[0].Host != b.Alias || len(p.Nodes[0].GPUs) == 0 {
			t.Errorf("the ranks' power log counts GPUs %v with nodes %+v, want rank 0's and one node, %s, with rank 1's", p.GPUs, p.Nodes, b.Alias)
		} else {
			w := measure.Window{Start: s.Levels[0].SteadyStartNs, End: s.Levels[0].SteadyEndNs}
			own, err0 := measure.PowerLog{GPUs: p.GPUs, Samples: p.Samples, Source: p.Source}.Energy(w)
			other, err1 := p.Nodes[0].Energy(w)
			if err0 != nil || err1 != nil || math.Abs(s.Levels[0].PowerW-(own.MeanW+other.MeanW)) > 1e-6*s.Levels[0].PowerW {
				t.Errorf("the level's power %.1f W, want node 0's %.1f W (%v) and node 1's %.1f W (%v)", s.Levels[0].PowerW, own.MeanW, err0, other.MeanW, err1)
			}
		}
		var single measure.PowerLog
		if err := readJSONFile(filepath.Join(out.RunDir, "single", "round-1", results.PowerFile), &single); err != nil {
			t.Fatal(err)
		}
		if len(single.Nodes) != 0 {
			t.Errorf("the single server's power log has nodes %+v", single.Nodes)
		}
	})

	t.Run("rank 1 killed mid-level", func(t *testing.T) {
		r.config(campaignOpts{scenarios: []string{"ranks"}, speed: 5, requests: 40, maxTokens: 64})
		b := r.hosts[1]
		events := filepath.Join(strings.ReplaceAll(r.workdir, "{host}", r.hosts[0].Alias), "sweeps", "ranks", "events.log")
		os.RemoveAll(filepath.Dir(events)) // the first campaign's sweep
		killed := make(chan string, 1)
		go func() {
			defer close(killed)
			deadline := time.Now().Add(4 * time.Minute)
			for time.Now().Before(deadline) {
				ev, _ := os.ReadFile(events)
				if strings.Contains(string(ev), `"level_start"`) {
					ps, _ := b.Processes(context.Background())
					for _, p := range ps {
						// The sim itself (the binary uploaded to the host), not
						// the shell that started it.
						if p.Comm == "bakeoff" && strings.Contains(p.Cmdline, " sim ") && strings.Contains(p.Cmdline, "--node-rank 1") {
							syscall.Kill(p.Pid, syscall.SIGKILL)
							killed <- p.Cmdline
							return
						}
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		out, _, err := r.runInProcess(context.Background(), orchestrator.Options{Hosts: r.connect(), OutDir: filepath.Join(r.root, "run2")})
		if err != nil {
			t.Fatal(err)
		}
		if <-killed == "" {
			t.Fatal("rank 1 was never seen to kill")
		}
		r.nothingLeft()
		s := scenarioResult(t, readSummary(t, out.RunDir), "ranks")
		if s.Status != results.StatusFailed || s.FailedPhase != string(orchestrator.StepSweep) {
			t.Fatalf("ranks: %s at %s (%s), want failed at sweep", s.Status, s.FailedPhase, s.Reason)
		}
		if want := "role ranks.1 on " + b.Alias + ": server exited during the sweep"; !strings.HasPrefix(s.Reason, want) {
			t.Errorf("reason %q, want it to start %q", s.Reason, want)
		}
	})

	t.Run("interrupted while loading", func(t *testing.T) {
		r.config(campaignOpts{scenarios: []string{"ranks", "single"}, speed: 1, healthTimeout: "2m"})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out, _, err := r.runInProcess(ctx, orchestrator.Options{Hosts: r.connect(), OutDir: filepath.Join(r.root, "run3"),
			Events: func(e orchestrator.Event) {
				if e.Kind == orchestrator.EventWaiting && strings.HasPrefix(e.Message, "ranks.1 started") {
					cancel()
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Canceled {
			t.Errorf("not canceled: %+v", out.Results)
		}
		r.nothingLeft()
	})
}
