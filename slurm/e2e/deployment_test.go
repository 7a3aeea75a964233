package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDeployment runs a campaign whose variant is one model's two ranks
// over both nodes of a two-node allocation (SGLang's --nnodes, --node-rank,
// --dist-init-addr, as the sim takes them): every launch takes the whole
// allocation, the ranks find each other at the nodes' own addresses, both
// rounds are measured and nothing is left on either node.
func TestDeployment(t *testing.T) {
	t.Parallel()
	r := rigOn(t, newCluster(t, 2))
	cfg := r.write(spec{rounds: 2, nodes: 2})
	r.writeYAML(filepath.Join("scenarios", "b.yaml"), map[string]any{
		"name": "b", "engine": "sglang", "model": "/models/sim",
		"args": map[string]any{"tp": 2, "watchdog-timeout": 30},
		"deployment": map[string]any{"roles": map[string]any{"ranks": map[string]any{
			"count": 2, "node": []int{0, 1},
			"args": map[string]any{"nnodes": "{count}", "node-rank": "{index}", "dist-init-addr": "{ranks.host}:{rendezvous}"},
		}}},
	})
	code, p := r.run("run", cfg)
	if code != 0 {
		t.Fatalf("bakeoff run: exit %d\n%s", code, p)
	}
	run := r.checkAllOK(r.runDirOf(), 2)
	nodes := r.nodeNames()
	for _, l := range run.Launches("b") {
		// The group's first node leads; the other holds rank 1.
		for i, want := range []string{"ranks.0 on ", "ranks.1 on ", "--node-rank 1"} {
			if !strings.Contains(l.Result.Launch, want) {
				t.Errorf("round %d: the launch lacks %q (%d):\n%s", l.Round, want, i, l.Result.Launch)
			}
		}
		for _, n := range nodes {
			if !strings.Contains(l.Result.Launch, " on "+n) {
				t.Errorf("round %d: no rank on node %s:\n%s", l.Round, n, l.Result.Launch)
			}
		}
	}
	if hosts := roundHosts(run); len(mapValues(hosts)) != 1 {
		t.Errorf("rounds ran on %v, want both on the group's first node", hosts)
	}
	r.checkNoJobs()
}
