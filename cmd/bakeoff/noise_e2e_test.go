package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/noise"
	"github.com/bakeoff-dev/bakeoff/results"
)

// checkNoiseProfileAcrossRuns: a host's noise profile is learned and
// lent. sc has run once: that first run of the campaign on the host
// started without a prior and left an observation of its noise in the
// results root. A second run starts with that profile in its manifest (the
// run it came from named), its verdict says how the prior served it, and
// the profile then holds both runs. TestPlanOverASimRun calls it after its
// own run, so that the two share a campaign.
func checkNoiseProfileAcrossRuns(t *testing.T, sc simCampaign) {
	root := sc.root
	key, ok := noiseKey(sc.c)
	if !ok {
		t.Fatal("a campaign on this machine has no noise key")
	}
	var runs []string
	for i := range 2 {
		if i > 0 {
			sc.run(t)
		}
		all, _ := filepath.Glob(filepath.Join(root, "plan", "*"))
		slices.Sort(all)
		runs = all
		p, err := noise.Load(root, key)
		if err != nil || p == nil {
			t.Fatalf("after campaign %d: profile %v, %v", i+1, p, err)
		}
		if len(p.Observations) != i+1 || !(p.Observations[i].Var > 0) || !(p.Observations[i].DF > 0) {
			t.Errorf("after campaign %d: observations %+v", i+1, p.Observations)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	first, err := results.ReadRun(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if first.Manifest.NoisePrior != nil {
		t.Errorf("the first run on the host started with a prior: %+v", first.Manifest.NoisePrior)
	}
	second, err := results.ReadRun(runs[1])
	if err != nil {
		t.Fatal(err)
	}
	p := second.Manifest.NoisePrior
	if p == nil || !(p.Var > 0) || len(p.Runs) != 1 || p.Runs[0] != "plan/"+filepath.Base(runs[0]) || !strings.Contains(p.Source, "local, sglang") {
		t.Fatalf("the second run's prior: %+v", p)
	}
	report := exec.Command(sc.bin, "report", runs[1], "--format", "text", "--detail")
	out, err := report.CombinedOutput()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "noise profile of local, sglang") {
		t.Errorf("the second run's report does not say how the profile served it:\n%s", out)
	}
}
