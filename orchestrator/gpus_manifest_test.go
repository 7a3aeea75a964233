package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestManifestGPUs: the manifest records each scenario's GPUs, as the
// verdict reads them to compare per GPU, and none for a campaign on hosts
// without a GPU.
func TestManifestGPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpu  campaign.GPUOpts
		want map[string]int
	}{
		{"GPU hosts", campaign.GPUOpts{}, map[string]int{"tp8": 8, "tp4": 4, "tp4x2": 8}},
		{"gpu: none", campaign.GPUOpts{None: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arg := func(k, v string) campaign.Arg { return campaign.Arg{Key: k, Values: []string{v}} }
			c := &campaign.Campaign{Name: "gpus", Baseline: "tp8", Rounds: 1, GPU: tc.gpu, Scenarios: []*campaign.Scenario{
				{Name: "tp8", Engine: "sglang", Args: []campaign.Arg{arg("tp-size", "8")}},
				{Name: "tp4", Engine: "sglang", Args: []campaign.Arg{arg("tp-size", "4")}},
				{Name: "tp4x2", Engine: "vllm", Args: []campaign.Arg{arg("data-parallel-size", "2"), arg("tensor-parallel-size", "4")}},
			}}
			out := filepath.Join(t.TempDir(), "run")
			o, err := newOrch(Options{Campaign: c, Hosts: idleFleet(1), OutDir: out})
			if err != nil {
				t.Fatal(err)
			}
			if err := o.openRun(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { o.jr.Close() })
			data, err := os.ReadFile(filepath.Join(out, results.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			var m results.Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.ScenarioGPUs, tc.want) {
				t.Errorf("scenario_gpus %v, want %v", m.ScenarioGPUs, tc.want)
			}
		})
	}
}
