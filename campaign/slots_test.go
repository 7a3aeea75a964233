package campaign

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// slotFiles is a TP 2 comparison for launches side by side: two
// deployments of one role on two GPUs each.
var slotFiles = memFiles{
	cfgPath: `campaign: t
host: local
launches_per_host: 4
sweep:
  concurrency: [1, 8]
baseline: a
scenarios: [a, b]
`,
	"c/scenarios/a.yaml": `name: a
model: /m
args: {tp-size: 2}
deployment:
  roles:
    server: {gpus: 2}
`,
	"c/scenarios/b.yaml": `name: b
extends: a
args: {enable-torch-compile: true}
`,
}

func TestSlots(t *testing.T) {
	c, errs := loadMem(t, slotFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	if c.LaunchesPerHost != 4 || c.SlotGPUs() != 2 {
		t.Fatalf("launches per host %d, slot GPUs %d; want 4 and 2", c.LaunchesPerHost, c.SlotGPUs())
	}
	var got []string
	for k := range 4 {
		sl := c.SlotOf(k)
		in := c.Scenarios[1].Deployment.Instances(c.Engine.Port, sl)[0]
		l, err := RenderInstance(c, c.Scenarios[1], []Instance{in}, 0, sl, On{}, LocalAddresses)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Command[:strings.Index(l.Command, " python3")]+" port "+strings.Fields(l.Command[strings.Index(l.Command, "--port"):])[1])
	}
	want := []string{
		"env -- CUDA_VISIBLE_DEVICES=0,1 port 30000",
		"env -- CUDA_VISIBLE_DEVICES=2,3 port 30100",
		"env -- CUDA_VISIBLE_DEVICES=4,5 port 30200",
		"env -- CUDA_VISIBLE_DEVICES=6,7 port 30300",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlotErrors(t *testing.T) {
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"a scenario of one server", slotFiles.with(memFiles{"c/scenarios/b.yaml": "name: b\nmodel: /m\nargs: {tp-size: 2}\n"}),
			[]string{`c/configs/camp.yaml:3:20: launches_per_host: 4 launches share each host, so each must say which GPUs it uses, and scenario b is one server without them: write it as a deployment of one role with gpus: (deployment: {roles: {server: {gpus: N}}})`}},
		{"a role without gpus", slotFiles.with(memFiles{"c/scenarios/b.yaml": "name: b\nextends: a\ndeployment:\n  roles:\n    router: {launch: [r]}\n  serve: router\n"}),
			[]string{`c/scenarios/b.yaml:5:5: deployment.roles.router: launches_per_host is 4 (c/configs/camp.yaml:3:20), so each role says which GPUs it uses: give it gpus: (gpus: 0 for a role that uses none, such as a router)`}},
		{"zero", slotFiles.with(memFiles{cfgPath: strings.Replace(slotFiles[cfgPath], "launches_per_host: 4", "launches_per_host: 0", 1)}),
			[]string{`c/configs/camp.yaml:3:20: launches_per_host: must be at least 1, got 0`}},
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

// routerSlotFiles is slotFiles with a router in front of each TP 2 server
// that says it uses no GPU (gpus: 0), as SGLang's router runs on the CPU.
var routerSlotFiles = slotFiles.with(memFiles{
	"c/scenarios/a.yaml": `name: a
model: /m
args: {tp-size: 2}
deployment:
  serve: router
  roles:
    server: {gpus: 2}
    router:
      gpus: 0
      launch: [python3, -m, sglang_router.launch_router, --worker-urls, "http://{server.host}:{server.port}",
        --host, "{host}", --port, "{port}"]
`,
})

// TestSlotsGPULessRole: a role of gpus: 0 satisfies launches_per_host,
// takes no GPU of a slot and counts none in the deployment's GPUs, and its
// command sets CUDA_VISIBLE_DEVICES empty, so that it sees no GPU (unset, it
// would see every GPU of the host, the other slots' too). A TP 2 server
// with such a router gives four slots of two GPUs on an eight-GPU host.
func TestSlotsGPULessRole(t *testing.T) {
	c, errs := loadMem(t, routerSlotFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	if c.LaunchesPerHost != 4 || c.SlotGPUs() != 2 {
		t.Fatalf("launches per host %d, slot GPUs %d; want 4 and 2", c.LaunchesPerHost, c.SlotGPUs())
	}
	for _, s := range c.Scenarios {
		if n := s.GPUs(); n != 2 {
			t.Errorf("scenario %s holds %d GPUs, want the server's 2", s.Name, n)
		}
	}
	var got []string
	renderSlots(t, c, c.Scenarios[1], 4, func(k int, in Instance, l *Launch) {
		env, _, _ := strings.Cut(l.Command, " python3")
		if v, ok := l.Env["CUDA_VISIBLE_DEVICES"]; in.Role.Name == "router" && (!ok || v != "") {
			t.Errorf("slot %d router: CUDA_VISIBLE_DEVICES %q (set %v), want set empty", k+1, v, ok)
		}
		got = append(got, fmt.Sprintf("slot %d %s gpus %v: %s", k+1, in.Name(), in.GPUs, env))
	})
	want := []string{
		"slot 1 server gpus [0 1]: env -- CUDA_VISIBLE_DEVICES=0,1",
		"slot 1 router gpus []: env -- CUDA_VISIBLE_DEVICES=''",
		"slot 2 server gpus [2 3]: env -- CUDA_VISIBLE_DEVICES=2,3",
		"slot 2 router gpus []: env -- CUDA_VISIBLE_DEVICES=''",
		"slot 3 server gpus [4 5]: env -- CUDA_VISIBLE_DEVICES=4,5",
		"slot 3 router gpus []: env -- CUDA_VISIBLE_DEVICES=''",
		"slot 4 server gpus [6 7]: env -- CUDA_VISIBLE_DEVICES=6,7",
		"slot 4 router gpus []: env -- CUDA_VISIBLE_DEVICES=''",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without it, the router would take a GPU of each slot: three a slot.
	c, errs = loadMem(t, routerSlotFiles.with(memFiles{"c/scenarios/b.yaml": `name: b
extends: a
args: {enable-torch-compile: true}
deployment:
  roles:
    router: {gpus: 1}
`}))
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	if c.SlotGPUs() != 3 {
		t.Errorf("a router of gpus: 1: slot GPUs %d, want 3", c.SlotGPUs())
	}
}

// pdSlotFiles is a disaggregated TP 1 pair for launches side by side: the
// prefill worker's bootstrap port, the router's view of it and a variable
// written through {port:N}, the router's through {ROLE.port}.
var pdSlotFiles = slotFiles.with(memFiles{
	cfgPath: strings.Replace(slotFiles[cfgPath], "launches_per_host: 4", "launches_per_host: 2", 1),
	"c/scenarios/b.yaml": `name: b
extends: a
args: {tp-size: 1}
deployment:
  serve: router
  roles:
    server: null
    prefill:
      gpus: 1
      args: {disaggregation-mode: prefill, disaggregation-bootstrap-port: "{port:8998}"}
      env: {NCCL_PORT: "{port:29500}"}
    decode:
      gpus: 1
      args: {disaggregation-mode: decode}
    router:
      gpus: [1]
      launch: [python3, -m, sglang_router.launch_router, --pd-disaggregation,
               --prefill, "http://{prefill.host}:{prefill.port}", "{port:8998}",
               --decode, "http://{decode.host}:{decode.port}", --host, "{host}", --port, "{port}"]
`,
})

// TestSlotPorts: every port a launch writes through a placeholder is its
// slot's: {port} and {ROLE.port} (the instances' own), {rendezvous}, and
// {port:N} for a port the engine takes from a flag of its own (here the
// prefill worker's bootstrap port, which the router names too), in flags,
// variables and a role's command alike.
func TestSlotPorts(t *testing.T) {
	c, errs := loadMem(t, pdSlotFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	var got []string
	renderSlots(t, c, c.Scenarios[1], 2, func(k int, in Instance, l *Launch) {
		var ports []string
		for _, f := range strings.Fields(l.Command) {
			if strings.Contains(f, "NCCL_PORT") || strings.Contains(f, ":") || (len(f) == 4 || len(f) == 5) && strings.Trim(f, "0123456789") == "" {
				ports = append(ports, f)
			}
		}
		got = append(got, fmt.Sprintf("slot %d %s: %s", k+1, in.Name(), strings.Join(ports, " ")))
	})
	want := []string{
		"slot 1 prefill: NCCL_PORT=29500 30000 8998",
		"slot 1 decode: 30001",
		"slot 1 router: http://127.0.0.1:30000 8998 http://127.0.0.1:30001 30002",
		"slot 2 prefill: NCCL_PORT=29600 30100 9098",
		"slot 2 decode: 30101",
		"slot 2 router: http://127.0.0.1:30100 9098 http://127.0.0.1:30101 30102",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ports by slot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// One server alone on its host: {port:N} is N.
	one := slotFiles.with(memFiles{
		cfgPath:              strings.Replace(slotFiles[cfgPath], "launches_per_host: 4\n", "", 1),
		"c/scenarios/b.yaml": "name: b\nmodel: /m\nargs: {nccl-port: \"{port:29500}\"}\n",
	})
	c, errs = loadMem(t, one)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	l, err := Render(c, c.Scenarios[1], On{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Command, "--nccl-port 29500") {
		t.Errorf("one server: %s", l.Command)
	}
}

// TestSlotPortErrors: with launches side by side, a port written as a
// number in a role's flags, variables or command would be the same port in
// every slot and is refused at its line, as are ports that one slot's
// shift makes another's; the same ports without launches_per_host load.
func TestSlotPortErrors(t *testing.T) {
	pd := pdSlotFiles["c/scenarios/b.yaml"]
	tests := []struct {
		name string
		b    string
		want []string
	}{
		{"a bootstrap port", strings.Replace(pd, `"{port:8998}"}`, `8998}`, 1),
			[]string{`c/scenarios/b.yaml:10:44: scenario b, role prefill: args.disaggregation-bootstrap-port: port 8998 is written as a number, so the launches side by side on a host (launches_per_host: 2) would all use it: write {port:8998}, port 8998 of each slot (8998, 9098, …), or {port}, {ROLE.port} or {rendezvous} for the ports bakeoff gives`}},
		{"a variable", strings.Replace(pd, `"{port:29500}"`, `"29500"`, 1),
			[]string{`c/scenarios/b.yaml:11:13: scenario b, role prefill: env.NCCL_PORT: port 29500 is written as a number, so the launches side by side on a host (launches_per_host: 2) would all use it: write {port:29500}, port 29500 of each slot (29500, 29600, …), or {port}, {ROLE.port} or {rendezvous} for the ports bakeoff gives`}},
		{"an address", strings.Replace(pd, `"http://{decode.host}:{decode.port}"`, `"http://{decode.host}:30001"`, 1),
			[]string{`c/scenarios/b.yaml:17:15: scenario b, role router: launch: --decode http://{decode.host}:30001: port 30001 is written as a number, so the launches side by side on a host (launches_per_host: 2) would all use it: write {port:30001}, port 30001 of each slot (30001, 30101, …), or {port}, {ROLE.port} or {rendezvous} for the ports bakeoff gives`}},
		{"the router's own port", strings.Replace(pd, `--port, "{port}"`, `--port, "30002"`, 1),
			[]string{`c/scenarios/b.yaml:17:15: scenario b, role router: launch: --port 30002: port 30002 is written as a number, so the launches side by side on a host (launches_per_host: 2) would all use it: write {port:30002}, port 30002 of each slot (30002, 30102, …), or {port}, {ROLE.port} or {rendezvous} for the ports bakeoff gives`}},
		{"the default bootstrap port", strings.Replace(pd, `, disaggregation-bootstrap-port: "{port:8998}"}`, `}`, 1),
			[]string{`c/scenarios/b.yaml:10:14: scenario b, role prefill: an SGLang prefill worker listens on its bootstrap port, 8998 unless told otherwise, so the launches side by side on a host (launches_per_host: 2) would all use it: give it disaggregation-bootstrap-port: "{port:8998}" (and the router {port:8998} after its --prefill URL)`}},
		{"a port another slot shifts onto", strings.Replace(pd, `"{port:29500}"`, `"{port:30101}"`, 1),
			[]string{`c/scenarios/b.yaml:11:13: scenario b: port 30101 ({port:30101} of role prefill) is port 30001 (decode's own of scenario b, c/scenarios/b.yaml:12:5) shifted into slot 2: launches side by side would share it (launches_per_host: 2, each slot's ports 100 above the last's); move one by other than a multiple of 100`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, pdSlotFiles.with(memFiles{"c/scenarios/b.yaml": tt.b}))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			alone := memFiles{cfgPath: strings.Replace(slotFiles[cfgPath], "launches_per_host: 4\n", "", 1), "c/scenarios/b.yaml": tt.b}
			if _, errs := loadMem(t, pdSlotFiles.with(alone)); errs != nil && tt.name != "a port another slot shifts onto" {
				t.Errorf("without launches_per_host: %v", errs)
			}
		})
	}
}

// renderSlots renders every instance of scenario s in each of the first
// slots slots of c, as a launch in that slot runs them, and hands each to
// check with its slot's index (0-based).
func renderSlots(t *testing.T, c *Campaign, s *Scenario, slots int, check func(k int, in Instance, l *Launch)) {
	t.Helper()
	for k := range slots {
		sl := c.SlotOf(k)
		insts := s.Deployment.Instances(c.Engine.Port, sl)
		for i, in := range insts {
			l, err := RenderInstance(c, s, insts, i, sl, On{}, LocalAddresses)
			if err != nil {
				t.Fatal(err)
			}
			check(k, in, l)
		}
	}
}
