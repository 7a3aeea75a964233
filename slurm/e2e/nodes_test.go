package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slurm"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// TestNodes runs campaigns with nodes: 2 on one two-node cluster, one
// after the other, the campaign that cuts a node off last, since the node
// stays lost.
func TestNodes(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	t.Run("both nodes", func(t *testing.T) { testBothNodes(t, rigOn(t, c)) })
	t.Run("node lost", func(t *testing.T) { testNodeLost(t, rigOn(t, c)) })
}

// testBothNodes runs four rounds in a two-node allocation: the nodes are
// the campaign's fleet, both run rounds, the verdict takes each node as a
// block, and the job is released at the end.
func testBothNodes(t *testing.T, r *rig) {
	cfg := r.write(spec{rounds: 4, nodes: 2})
	code, p := r.run("run", cfg)
	if code != 0 {
		t.Fatalf("bakeoff run: exit %d\n%s", code, p)
	}
	id := jobOf(t, p)
	runDir := r.runDirOf()
	nodes := r.nodeNames()
	if a := manifest(t, runDir).Allocation; a == nil || a.JobID != id || !slices.Equal(sorted(a.Nodes), nodes) {
		t.Errorf("manifest allocation %+v, want job %s on %v", a, id, nodes)
	}
	run := r.checkAllOK(runDir, 4)
	if ran := roundHosts(run); !slices.Equal(sorted(mapValues(ran)), nodes) {
		t.Errorf("rounds ran on %v, want on both of %v", ran, nodes)
	}
	v, err := judge.Run(run, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, h := range v.Hosts {
		blocks = append(blocks, h.Host)
	}
	if !slices.Equal(blocks, nodes) {
		t.Errorf("the verdict's hosts %v, want each node as a block: %v", blocks, nodes)
	}
	if !strings.Contains(p.stdout.String(), "Rounds by host:") {
		t.Errorf("the end report does not say which rounds ran where\n%s", p)
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the campaign, want CANCELLED", id, st)
	}
	r.checkNoJobs()
}

// testNodeLost cuts one node off while it sweeps the first launch of its
// round: the controller sets the node DOWN and the job (asked for with
// --no-kill) runs on; the round runs again whole on the other node, the
// campaign ends with a verdict, the journal names the lost node, and the
// job is released by bakeoff, not ended by Slurm.
func testNodeLost(t *testing.T, r *rig) {
	// bakeoff gives the node up once its SSH keepalives have failed and
	// then the link patience has passed: longer than the controller's
	// SlurmdTimeout, so that Slurm sets the node DOWN while the campaign
	// still runs, as it would on a cluster.
	cfg := r.write(spec{rounds: 2, nodes: 2, linkPatience: "30s"})
	p := r.start("run", cfg)
	runDir := r.waitRunDir(p)
	var cut orchestrator.JournalEntry
	r.waitJournal(p, runDir, func(e orchestrator.JournalEntry) bool {
		if e.Phase != "sweep" || e.Event != "start" || e.Host == "" || e.Host == r.c.Node {
			return false
		}
		cut = e
		return true
	})
	id := jobOf(t, p)
	r.cutNode(cut.Host)
	t.Logf("cut %s during %s round %d", cut.Host, cut.Scenario, cut.Round)
	// Slurm notices first: it sets the node DOWN and, the job being
	// --no-kill, takes the node out of the job instead of ending it.
	r.waitJobNodes(id, []string{r.c.Node})
	if st := r.jobState(id); st != slurm.StateRunning {
		t.Errorf("job %s is %q once its node %s is DOWN, want RUNNING on the node left (--no-kill)\n%s", id, st, cut.Host, r.c.Logs())
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d with one node left, want 0\n%s", code, p)
	}
	for _, want := range []string{"Hosts lost:", fmt.Sprintf("%s during round %d", cut.Host, cut.Round),
		"(moved from " + cut.Host + ")", "slurm: released job " + id} {
		if !strings.Contains(p.stdout.String()+p.stderr.String(), want) {
			t.Errorf("bakeoff did not say %q\n%s", want, p)
		}
	}
	es, err := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(es, func(e orchestrator.JournalEntry) bool {
		return e.Phase == orchestrator.PhaseHost && e.Event == orchestrator.HostLost && e.Host == cut.Host && e.Round == cut.Round
	}) {
		t.Errorf("the journal does not say node %s was lost in round %d", cut.Host, cut.Round)
	}
	run := r.checkAllOK(runDir, 2)
	if h := roundHosts(run)[cut.Round]; h != r.c.Node {
		t.Errorf("round %d counts launches on %q, want the node left, %s", cut.Round, h, r.c.Node)
	}
	if _, err := judge.Run(run, verdict.Options{}); err != nil {
		t.Errorf("no verdict: %v", err)
	}
	if !strings.Contains(p.stdout.String(), "Results:") {
		t.Errorf("no verdict and results path printed\n%s", p)
	}
	if st := r.jobState(id); st != slurm.StateCancelled {
		t.Errorf("job %s is %q after the campaign, want CANCELLED (released, not ended by the node's failure)", id, st)
	}
	r.checkNoJobs()
}

// cutNode cuts a node off for good and leaves it out of the final check.
func (r *rig) cutNode(name string) {
	r.t.Helper()
	r.c.CutNode(name)
	r.cut[name] = true
}

// waitJobNodes waits until job id holds nodes, and no other.
func (r *rig) waitJobNodes(id string, nodes []string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var got []string
	var err error
	if !campaigntest.Until(ctx, nil, 200*time.Millisecond, func() bool {
		got, err = r.c.JobNodes(context.Background(), id)
		return err != nil || slices.Equal(got, nodes)
	}) {
		r.t.Fatalf("job %s holds %v, not %v, %s after a node was cut off\n%s", id, got, nodes, waitTimeout, r.c.Logs())
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

// nodeNames are the cluster's nodes, sorted.
func (r *rig) nodeNames() []string {
	var names []string
	for _, n := range r.c.Nodes {
		names = append(names, n.Name)
	}
	return sorted(names)
}

// checkAllOK reads the run and checks that each of its two scenarios has
// a successful launch in every one of rounds rounds.
func (r *rig) checkAllOK(runDir string, rounds int) *results.Run {
	r.t.Helper()
	run, err := results.ReadRun(runDir)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		ls := run.Launches(name)
		if len(ls) != rounds {
			r.t.Errorf("%s: %d launches, want %d", name, len(ls), rounds)
		}
		for _, l := range ls {
			if l.Result == nil || l.Result.Status != results.StatusOK {
				r.t.Errorf("%s round %d: %+v", name, l.Round, l.Result)
			}
		}
	}
	return run
}

// roundHosts is the host of each round's counted launches, "A+B" for a
// round whose launches ran on two hosts (which no check accepts).
func roundHosts(run *results.Run) map[int]string {
	out := map[int]string{}
	for _, name := range []string{"a", "b"} {
		for _, l := range run.Launches(name) {
			if h, ok := out[l.Round]; ok && h != l.Result.HostName {
				out[l.Round] = h + "+" + l.Result.HostName
				continue
			}
			out[l.Round] = l.Result.HostName
		}
	}
	return out
}

func mapValues(m map[int]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
