package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestParseRDMA: /sys/class/infiniband's entries, sorted; none is an empty
// list, the fact recorded, not an unread one.
func TestParseRDMA(t *testing.T) {
	if got := parseRDMA("mlx5_1\nmlx5_0\n"); !slices.Equal(got, []string{"mlx5_0", "mlx5_1"}) {
		t.Errorf("two devices: %q", got)
	}
	if got := parseRDMA(""); got == nil || len(got) != 0 {
		t.Errorf("none: %#v, want an empty list", got)
	}
}

// TestSaysNoHCA: Mooncake's count of RDMA devices, as glog writes it into
// the role's log, is read when it is zero and only then.
func TestSaysNoHCA(t *testing.T) {
	for line, want := range map[string]bool{
		"I1204 15:20:01.123456 41235 transfer_engine_impl.cpp:252] Topology discovery complete. Found 0 HCAs.": true,
		"I1204 15:20:01.123456 41235 transfer_engine_impl.cpp:252] Topology discovery complete. Found 8 HCAs.": false,
		"I1204 15:20:01.123401 41235 transfer_engine_impl.cpp:236] Auto-discovering topology...":               false,
	} {
		if saysNoHCA(line) != want {
			t.Errorf("%q: %v, want %v", line, !want, want)
		}
	}
}

// disaggCampaign is a campaign of an aggregated baseline and deployments of
// prefill and decode workers behind a router, one per transfer backend
// ("" for SGLang's default), on the engine command given.
func disaggCampaign(command []string, backends ...string) *campaign.Campaign {
	arg := func(k, v string) campaign.RoleArg {
		return campaign.RoleArg{Arg: campaign.Arg{Key: k, Values: []string{v}}}
	}
	c := &campaign.Campaign{Name: "pd", Baseline: "agg", Rounds: 1, Engine: campaign.EngineOpts{Command: command},
		Scenarios: []*campaign.Scenario{{Name: "agg", Engine: "sglang", Model: "/m", Env: map[string]string{}}}}
	for _, b := range backends {
		worker := func(name, mode string) *campaign.Role {
			r := &campaign.Role{Name: name, Count: 1, Args: []campaign.RoleArg{arg("disaggregation-mode", mode)}}
			if b != "" {
				r.Args = append(r.Args, arg("disaggregation-transfer-backend", b))
			}
			return r
		}
		router := &campaign.Role{Name: "router", Count: 1, Launch: []string{"python3", "-m", "sglang_router.launch_router", "--pd-disaggregation"}}
		name := "pd-" + b
		if b == "" {
			name = "pd"
		}
		c.Scenarios = append(c.Scenarios, &campaign.Scenario{Name: name, Engine: "sglang", Model: "/m", Env: map[string]string{},
			Deployment: &campaign.Deployment{Serve: "router", Roles: []*campaign.Role{worker("prefill", "prefill"), worker("decode", "decode"), router}}})
	}
	return c
}

// TestDisaggScenarios: every scenario with a prefill or decode role is
// disaggregated; those whose KV cache Mooncake (the default) or NIXL moves
// on a real engine want RDMA, not TCP by choice (mooncake_tcp,
// MC_FORCE_TCP), and not the sim's.
func TestDisaggScenarios(t *testing.T) {
	c := disaggCampaign(nil, "", "nixl", "mooncake_tcp")
	all, kv := disaggScenarios(c)
	if !slices.Equal(all, []string{"pd", "pd-nixl", "pd-mooncake_tcp"}) || !slices.Equal(kv, []string{"pd", "pd-nixl"}) {
		t.Errorf("disaggregated %q, wanting RDMA %q", all, kv)
	}
	pd := c.Scenarios[1]
	if !watchesNoHCA(c, pd.RoleScenario(pd.Deployment.Roles[0])) || watchesNoHCA(c, pd.RoleScenario(pd.Deployment.Roles[2])) {
		t.Errorf("a Mooncake worker's log is watched, the router's not")
	}
	if nixl := c.Scenarios[2]; watchesNoHCA(c, nixl.RoleScenario(nixl.Deployment.Roles[0])) {
		t.Errorf("a NIXL worker's log is watched for Mooncake's line")
	}
	forced := disaggCampaign(nil, "")
	forced.Scenarios[1].Env["MC_FORCE_TCP"] = "1"
	if all, kv := disaggScenarios(forced); !slices.Equal(all, []string{"pd"}) || len(kv) > 0 {
		t.Errorf("Mooncake forced to TCP: disaggregated %q, wanting RDMA %q", all, kv)
	}
	sim := disaggCampaign([]string{campaign.TokenBakeoff, "sim", "--sim-speed", "10"}, "")
	if all, kv := disaggScenarios(sim); !slices.Equal(all, []string{"pd"}) || len(kv) > 0 {
		t.Errorf("on the sim: disaggregated %q, wanting RDMA %q", all, kv)
	}
}

// TestIsRouter: SGLang's router and bakeoff's are asked for their help;
// another program of a role's own launch is not run.
func TestIsRouter(t *testing.T) {
	for _, tt := range []struct {
		launch string
		want   bool
	}{
		{"python3 -m sglang_router.launch_router --pd-disaggregation --prefill http://a:1", true},
		{"{bakeoff} sim router --pd-disaggregation", true},
		{"/opt/venv/bin/python -m sglang_router.launch_router", true},
		{"python3 -m sglang.launch_server --model-path /m", false},
		{"/opt/run.sh --router", false},
		{"ray start --head", false},
	} {
		if got := isRouter(strings.Fields(tt.launch)); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.launch, got, tt.want)
		}
	}
	if got := programEnd(strings.Fields("python3 -m sglang_router.launch_router --pd-disaggregation")); got != 3 {
		t.Errorf("the program ends at word %d, want 3", got)
	}
}

// TestNoHCARecorded: a worker's word that it found no RDMA device goes into
// its host's facts in the manifest, once per role, with one warning.
func TestNoHCARecorded(t *testing.T) {
	c := disaggCampaign(nil, "")
	out := filepath.Join(t.TempDir(), "run")
	var warned []string
	o, err := newOrch(Options{Campaign: c, Hosts: idleFleet(1), OutDir: out, Events: func(e Event) {
		if e.Kind == EventWarning {
			warned = append(warned, e.Message)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.openRun(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.jr.Close() })
	w := o.workers[0]
	w.facts.RDMA = &results.RDMA{Devices: []string{"mlx5_0"}, Scenarios: []string{"pd"}}
	o.man.Host = w.facts // as prepare leaves it
	pd := c.Scenarios[1]
	s := &scenarioRun{o: o, w: w, sc: pd}
	for _, role := range []*campaign.Role{pd.Deployment.Roles[0], pd.Deployment.Roles[0], pd.Deployment.Roles[1]} {
		s.noHCA(&roleProc{in: campaign.Instance{Role: role}, name: role.Name, node: w})
	}
	data, err := os.ReadFile(filepath.Join(out, results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Host.RDMA == nil || !slices.Equal(m.Host.RDMA.NoHCA, []string{"pd.prefill", "pd.decode"}) {
		t.Errorf("manifest host RDMA %+v, want the two roles once each", m.Host.RDMA)
	}
	if len(warned) != 2 || !strings.Contains(warned[0], `role prefill on gpu-00 logged "Topology discovery complete. Found 0 HCAs."`) {
		t.Errorf("warnings %q", warned)
	}
}
