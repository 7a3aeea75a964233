package orchestrator

import (
	"slices"
	"strconv"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// TestSweepArgvCarriesTheWorkload: the sweep on the host gets every
// workload option, in a form that rebuilds the same prompt set there.
func TestSweepArgvCarriesTheWorkload(t *testing.T) {
	syn := &prompts.SyntheticSpec{Count: 30, Input: prompts.Dist{Kind: prompts.DistNormal, Mean: 200, SD: 40, Min: 1},
		Output: prompts.Dist{Kind: prompts.DistUniform, Min: 10, Max: 90}}
	sw := campaign.Sweep{Concurrency: []int{1}, MaxTokens: 50, Endpoint: campaign.EndpointChat, Seed: 42,
		Prompts: prompts.Builtin, Synthetic: syn}
	argv := sweepArgv("bakeoff", sweepSpec(sw, "sglang", "http://127.0.0.1:1"), "/d")
	flag := func(name string) string {
		i := slices.Index(argv, name)
		if i < 0 || i+1 >= len(argv) {
			t.Fatalf("%v has no %s", argv, name)
		}
		return argv[i+1]
	}
	spec, err := prompts.ParseSynthetic(flag("--synthetic"))
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := strconv.ParseInt(flag("--seed"), 10, 64)
	there, err := prompts.Make(prompts.Spec{File: flag("--prompts"), Synthetic: &spec}, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	here, err := sw.PromptSet()
	if err != nil {
		t.Fatal(err)
	}
	if there.Hash != here.Hash {
		t.Error("the host would build another synthetic set")
	}
	if slices.Contains(argv, "--output-lengths") {
		t.Error("--output-lengths without recorded lengths")
	}

	sw.Synthetic = nil
	sw.OutputLengths = prompts.OutputRecorded
	argv = sweepArgv("bakeoff", sweepSpec(sw, "sglang", "http://127.0.0.1:1"), "/d")
	if flag("--output-lengths") != prompts.OutputRecorded || slices.Contains(argv, "--synthetic") {
		t.Errorf("recorded lengths: %v", argv)
	}
}
