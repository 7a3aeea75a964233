package campaign

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const (
	disaggPath = "c/scenarios/disagg.yaml"
	ranksPath  = "c/scenarios/ranks.yaml"
)

// deployFiles is goodFiles with two deployments beside the plain baseline:
// prefill and decode workers behind a router on one host, and one model's
// ranks over two nodes.
var deployFiles = goodFiles.with(memFiles{
	cfgPath: `campaign: t
hosts: [gpu-a, gpu-b, gpu-c, gpu-d]
sweep:
  concurrency: [1, 8]
baseline: base
scenarios: [base, disagg, ranks]
`,
	disaggPath: `name: disagg
extends: base
deployment:
  serve: router
  roles:
    prefill:
      gpus: 2
      args:
        disaggregation-mode: prefill
        disaggregation-bootstrap-port: 8998
    decode:
      gpus: 2
      args:
        disaggregation-mode: decode
    router:
      launch: [python3, -m, sglang_router.launch_router, --pd-disaggregation,
        --prefill, "http://{prefill.host}:{prefill.port}", "8998",
        --decode, "http://{decode.host}:{decode.port}", --host, "{host}", --port, "{port}"]
`,
	ranksPath: `name: ranks
extends: base
args:
  tp: 16
deployment:
  roles:
    ranks:
      count: 2
      node: [0, 1]
      args:
        nnodes: "{count}"
        node-rank: "{index}"
        dist-init-addr: "{ranks.host}:{rendezvous}"
`,
})

func TestDeploymentLoads(t *testing.T) {
	c, errs := loadMem(t, deployFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	byName := map[string]*Scenario{}
	for _, s := range c.Scenarios {
		byName[s.Name] = s
	}
	if byName["base"].Deployment != nil {
		t.Fatalf("the plain baseline has a deployment: %+v", byName["base"].Deployment)
	}
	if got := c.NodesPerLaunch(); got != 2 {
		t.Errorf("NodesPerLaunch = %d, want 2 (the ranks span two nodes)", got)
	}

	d := byName["disagg"]
	if d.Deployment.Serve != "router" || d.NodesPerLaunch() != 1 {
		t.Errorf("disagg: serve %q over %d nodes, want router over 1", d.Deployment.Serve, d.NodesPerLaunch())
	}
	// The router serves no engine figures: they are the decode worker's.
	if d.Deployment.Figures != "decode" {
		t.Errorf("disagg: figures from %q, want decode", d.Deployment.Figures)
	}
	var waves [][]string
	for _, w := range d.StartOrder() {
		var names []string
		for _, r := range w {
			names = append(names, r.Name)
		}
		waves = append(waves, names)
	}
	if want := [][]string{{"prefill", "decode"}, {"router"}}; !reflect.DeepEqual(waves, want) {
		t.Errorf("start order %v, want %v (the router refers to both workers)", waves, want)
	}
	insts := d.Deployment.Instances(c.Engine.Port, Slot{})
	var lines []string
	for i, in := range insts {
		l, err := RenderInstance(c, d, insts, i, Slot{}, On{}, LocalAddresses)
		if err != nil {
			t.Fatalf("render %s: %v", in.Name(), err)
		}
		lines = append(lines, fmt.Sprintf("%s node %d port %d gpus %v: %s", in.Name(), in.Node, in.Port, in.GPUs, l.Command))
	}
	want := []string{
		"prefill node 0 port 30000 gpus [0 1]: env -- CUDA_VISIBLE_DEVICES=0,1 NCCL_PROTO=LL python3 -m sglang.launch_server --model-path /m --host 127.0.0.1 --port 30000 --disaggregation-bootstrap-port 8998 --disaggregation-mode prefill --max-running-requests 64 --tp 2",
		"decode node 0 port 30001 gpus [2 3]: env -- CUDA_VISIBLE_DEVICES=2,3 NCCL_PROTO=LL python3 -m sglang.launch_server --model-path /m --host 127.0.0.1 --port 30001 --disaggregation-mode decode --max-running-requests 64 --tp 2",
		"router node 0 port 30002 gpus []: env -- NCCL_PROTO=LL python3 -m sglang_router.launch_router --pd-disaggregation --prefill http://127.0.0.1:30000 8998 --decode http://127.0.0.1:30001 --host 127.0.0.1 --port 30002",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("disagg launches:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := d.GPUs(); got != 4 {
		t.Errorf("disagg GPUs = %d, want 4 (two workers of 2, a router of none)", got)
	}

	r := byName["ranks"]
	insts = r.Deployment.Instances(c.Engine.Port, Slot{})
	addr := func(node int) string { return fmt.Sprintf("10.0.0.%d", node+1) }
	lines = nil
	for i, in := range insts {
		l, err := RenderInstance(c, r, insts, i, Slot{}, On{}, addr)
		if err != nil {
			t.Fatalf("render %s: %v", in.Name(), err)
		}
		lines = append(lines, fmt.Sprintf("%s node %d: %s", in.Name(), in.Node, l.Command))
	}
	want = []string{
		"ranks.0 node 0: env -- NCCL_PROTO=LL python3 -m sglang.launch_server --model-path /m --host 10.0.0.1 --port 30000 --dist-init-addr 10.0.0.1:5000 --max-running-requests 64 --nnodes 2 --node-rank 0 --tp 16",
		"ranks.1 node 1: env -- NCCL_PROTO=LL python3 -m sglang.launch_server --model-path /m --host 10.0.0.2 --port 30000 --dist-init-addr 10.0.0.1:5000 --max-running-requests 64 --nnodes 2 --node-rank 1 --tp 16",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("ranks launches:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := r.GPUs(); got != 16 {
		t.Errorf("ranks GPUs = %d, want 16 (tp 16 split over two nodes)", got)
	}
}

// TestDeploymentSlot: a launch that shares its host in a slot gets its
// ports and GPUs shifted, its rendezvous port too.
func TestDeploymentSlot(t *testing.T) {
	c, errs := loadMem(t, deployFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	d := c.Scenarios[1]
	sl := Slot{PortOffset: 100, GPUOffset: 4}
	var got []string
	for _, in := range d.Deployment.Instances(c.Engine.Port, sl) {
		got = append(got, fmt.Sprintf("%s:%d%v", in.Name(), in.Port, in.GPUs))
	}
	if want := []string{"prefill:30100[4 5]", "decode:30101[6 7]", "router:30102[]"}; !slices.Equal(got, want) {
		t.Errorf("instances in a slot %v, want %v", got, want)
	}
	if got := d.Deployment.Rendezvous(sl); got != DefaultRendezvousPort+100 {
		t.Errorf("rendezvous in a slot = %d, want %d", got, DefaultRendezvousPort+100)
	}
}

// TestDeploymentExtends: a child changes a parent's role key by key, adds a
// role and removes one; the parent keeps its own.
func TestDeploymentExtends(t *testing.T) {
	files := deployFiles.with(memFiles{
		cfgPath: strings.Replace(deployFiles[cfgPath], "[base, disagg, ranks]", "[base, disagg, disagg2]", 1),
		"c/scenarios/disagg2.yaml": `name: disagg2
extends: disagg
deployment:
  roles:
    decode:
      count: 2
      args:
        disaggregation-mode: decode
        max-running-requests: null
    router:
      launch: [python3, -m, sglang_router.launch_router, --pd-disaggregation,
        --prefill, "http://{prefill.host}:{prefill.port}", "8998",
        --decode, "http://{decode.0.host}:{decode.0.port}", --decode, "http://{decode.1.host}:{decode.1.port}",
        --host, "{host}", --port, "{port}"]
`,
	})
	c, errs := loadMem(t, files)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	parent, child := c.Scenarios[1], c.Scenarios[2]
	if got := parent.Deployment.Role("decode").Count; got != 1 {
		t.Errorf("the parent's decode count changed to %d", got)
	}
	insts := child.Deployment.Instances(c.Engine.Port, Slot{})
	var names []string
	for _, in := range insts {
		names = append(names, in.Name())
	}
	if want := []string{"prefill", "decode.0", "decode.1", "router"}; !slices.Equal(names, want) {
		t.Fatalf("child instances %v, want %v", names, want)
	}
	l, err := RenderInstance(c, child, insts, 1, Slot{}, On{}, LocalAddresses)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(l.Command, "max-running-requests") || !strings.Contains(l.Command, "CUDA_VISIBLE_DEVICES=2,3") {
		t.Errorf("decode.0 of the child: %s (want max-running-requests removed, GPUs 2,3)", l.Command)
	}
	l, err = RenderInstance(c, child, insts, 3, Slot{}, On{}, LocalAddresses)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Command, "--decode http://127.0.0.1:30001 --decode http://127.0.0.1:30002") {
		t.Errorf("router of the child: %s", l.Command)
	}
	if got := child.GPUs(); got != 6 {
		t.Errorf("child GPUs = %d, want 6", got)
	}
}

func TestDeploymentErrors(t *testing.T) {
	with := func(path, text string) memFiles { return deployFiles.with(memFiles{path: text}) }
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"no serve with two roles", with(disaggPath, `extends: base
deployment:
  roles:
    a: {}
    b: {}
`), []string{`c/scenarios/disagg.yaml:3:3: scenario disagg: deployment.serve: missing (the role the load generator talks to: a, b)`}},
		{"serve names no role", with(disaggPath, `extends: base
deployment:
  serve: routr
  roles:
    router: {}
`), []string{`c/scenarios/disagg.yaml:3:10: deployment.serve: "routr" is not a role of scenario disagg (router)`}},
		{"figures from no role", with(disaggPath, `extends: base
deployment:
  serve: router
  figures: decod
  roles:
    router: {}
`), []string{`c/scenarios/disagg.yaml:4:12: deployment.figures: "decod" is not a role of scenario disagg (router)`}},
		{"unknown role key", with(disaggPath, `extends: base
deployment:
  roles:
    a: {gpu: 2}
`), []string{`c/scenarios/disagg.yaml:4:9: deployment.roles.a: unknown key "gpu" (known: args, count, engine, env, gpus, health, launch, model, node, port)`}},
		{"a reference to no role", with(disaggPath, `extends: base
deployment:
  serve: router
  roles:
    prefill: {}
    router:
      launch: [router, --prefill, "http://{prefil.host}:{prefill.port}"]
`), []string{`c/scenarios/disagg.yaml:7:15: scenario disagg, role router: {prefil.host} names no role (prefill, router)`}},
		{"an instance beyond the count", with(disaggPath, `extends: base
deployment:
  serve: router
  roles:
    decode: {count: 2}
    router:
      args: {decode: "{decode.2.port}"}
`), []string{`c/scenarios/disagg.yaml:7:14: scenario disagg, role router: {decode.2.port}: role decode has 2 instance(s), 0 to 1`}},
		{"roles that wait for each other", with(disaggPath, `extends: base
deployment:
  serve: a
  roles:
    a:
      args: {peer: "{b.host}"}
    b:
      args: {peer: "{a.host}"}
`), []string{`c/scenarios/disagg.yaml:5:5: scenario disagg: roles wait for each other to be ready: a → b → a (a role starts once the roles it refers to are ready; ranks of one group are one role with a count)`}},
		{"nodes and count disagree", with(disaggPath, `extends: base
deployment:
  roles:
    ranks: {count: 3, node: [0, 1]}
`), []string{`c/scenarios/disagg.yaml:4:29: deployment.roles.ranks.node: 2 nodes for 3 instances (count); give one node, or one per instance`}},
		{"listed GPUs shared by instances", with(disaggPath, `extends: base
deployment:
  roles:
    w: {count: 2, gpus: [0, 1]}
`), []string{`c/scenarios/disagg.yaml:4:25: deployment.roles.w.gpus: 2 instances on node 0 would share GPUs [0 1]; give a count (gpus: 2) to give each its own`}},
		{"two roles on one GPU", with(disaggPath, `extends: base
deployment:
  serve: a
  roles:
    a: {gpus: [0, 1]}
    b: {gpus: [1]}
`), []string{`c/scenarios/disagg.yaml:6:15: deployment.roles.b.gpus: a and b would both use GPU 1 of node 0`}},
		{"gpus: as an empty list", with(disaggPath, `extends: base
deployment:
  roles:
    w: {gpus: []}
`), []string{`c/scenarios/disagg.yaml:4:15: deployment.roles.w.gpus: empty list; for a role that uses no GPU (a router), write gpus: 0`}},
		{"gpus: negative", with(disaggPath, `extends: base
deployment:
  roles:
    w: {gpus: -1}
`), []string{`c/scenarios/disagg.yaml:4:15: deployment.roles.w.gpus: must not be negative, got -1`}},
		{"serve off node 0", with(disaggPath, `extends: base
deployment:
  roles:
    w: {node: 1}
`), []string{`c/scenarios/disagg.yaml:4:15: deployment.roles.w.node: the role the load generator talks to (deployment.serve) runs its instance 0 on node 0, where the load runs`}},
		{"a flag the launcher sets", with(disaggPath, `extends: base
deployment:
  roles:
    w:
      args: {port: 31000}
`), []string{`c/scenarios/disagg.yaml:5:14: args: port is set by bakeoff for each instance of role w (from engine.port); remove it`}},
		{"a fleet too small", deployFiles.with(memFiles{cfgPath: strings.Replace(deployFiles[cfgPath], "[gpu-a, gpu-b, gpu-c, gpu-d]", "[gpu-a]", 1)}),
			[]string{`c/configs/camp.yaml:2:8: scenario ranks spans 2 nodes (c/scenarios/ranks.yaml:6:3), but the campaign has a fleet of 1: give hosts: at least 2 hosts, or host.slurm.nodes: 2`}},
		{"one ssh host", deployFiles.with(memFiles{cfgPath: strings.Replace(deployFiles[cfgPath], "hosts: [gpu-a, gpu-b, gpu-c, gpu-d]", "host: {ssh: gpu}", 1)}),
			[]string{`c/configs/camp.yaml:2:7: scenario ranks spans 2 nodes (c/scenarios/ranks.yaml:6:3), but the campaign has one host: give hosts: at least 2 hosts, or host.slurm.nodes: 2`}},
		{"a one-node allocation", deployFiles.with(memFiles{cfgPath: strings.Replace(deployFiles[cfgPath], "hosts: [gpu-a, gpu-b, gpu-c, gpu-d]",
			"host:\n  slurm: {login: hpc, time: \"1:00:00\", nodes: 1}", 1)}),
			[]string{`c/configs/camp.yaml:3:47: scenario ranks spans 2 nodes (c/scenarios/ranks.yaml:6:3), but the campaign has an allocation of 1 node(s): give hosts: at least 2 hosts, or host.slurm.nodes: 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, tt.files)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestRoleNoGPUs: gpus: 0 is a role that uses no GPU: it loads wherever
// gpus: does (a child's role may set it over its parent's count), its
// instances get no GPU and CUDA_VISIBLE_DEVICES set empty, it holds none of
// the scenario's GPUs whatever its engine flags say, and the roles beside
// it take GPUs from 0 as if it were not there.
func TestRoleNoGPUs(t *testing.T) {
	c, errs := loadMem(t, deployFiles.with(memFiles{disaggPath: `name: disagg
extends: base
deployment:
  serve: router
  roles:
    cpu: {gpus: 2}
    worker: {gpus: 2}
    router:
      gpus: 0
      launch: [python3, -m, sglang_router.launch_router, --worker-urls, "http://{worker.host}:{worker.port}"]
`, ranksPath: `name: ranks
extends: disagg
deployment:
  roles:
    cpu: {gpus: 0, count: 2}
`}))
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	byName := map[string]*Scenario{}
	for _, s := range c.Scenarios {
		byName[s.Name] = s
	}
	for _, tt := range []struct {
		name string
		gpus int
		want []string
	}{
		{"disagg", 4, []string{
			"cpu gpus [0 1]: env -- CUDA_VISIBLE_DEVICES=0,1 NCCL_PROTO=LL",
			"worker gpus [2 3]: env -- CUDA_VISIBLE_DEVICES=2,3 NCCL_PROTO=LL",
			"router gpus []: env -- CUDA_VISIBLE_DEVICES='' NCCL_PROTO=LL",
		}},
		// The cpu role's server has --tp 2 from base, and holds none.
		{"ranks", 2, []string{
			"cpu.0 gpus []: env -- CUDA_VISIBLE_DEVICES='' NCCL_PROTO=LL",
			"cpu.1 gpus []: env -- CUDA_VISIBLE_DEVICES='' NCCL_PROTO=LL",
			"worker gpus [0 1]: env -- CUDA_VISIBLE_DEVICES=0,1 NCCL_PROTO=LL",
			"router gpus []: env -- CUDA_VISIBLE_DEVICES='' NCCL_PROTO=LL",
		}},
	} {
		s := byName[tt.name]
		insts := s.Deployment.Instances(c.Engine.Port, Slot{})
		var got []string
		for i, in := range insts {
			l, err := RenderInstance(c, s, insts, i, Slot{}, On{}, LocalAddresses)
			if err != nil {
				t.Fatalf("%s: render %s: %v", tt.name, in.Name(), err)
			}
			env, _, _ := strings.Cut(l.Command, " python3")
			got = append(got, fmt.Sprintf("%s gpus %v: %s", in.Name(), in.GPUs, env))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s launches:\n%s\nwant:\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		if n := s.GPUs(); n != tt.gpus {
			t.Errorf("%s holds %d GPUs, want %d", tt.name, n, tt.gpus)
		}
	}
}
