package orchestrator_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
)

// TestDeploymentRouterPreflight: a disaggregated deployment whose router is
// not installed (python3 has no sglang_router) fails in the preflight,
// before any worker loads: exit 2, naming the scenario's file, the
// scenario, the role and the router's help command, with what python
// said; nothing launched. The run's manifest records the host's RDMA
// devices, read in prepare because a scenario is disaggregated: those of
// this machine's /sys/class/infiniband, none where it is absent.
func TestDeploymentRouterPreflight(t *testing.T) {
	w := newWorld(t)
	p := newDeployPorts(t, w)
	// A python3 without SGLang's router, on every machine the test runs on:
	// it answers as CPython 3.11 does for a module of a package it cannot
	// find.
	python := filepath.Join(w.root, "bin", "python3")
	stub := "#!/bin/sh\necho \"/usr/bin/python3: Error while finding module specification for 'sglang_router.launch_router' (ModuleNotFoundError: No module named 'sglang_router')\" >&2\nexit 1\n"
	if err := os.WriteFile(python, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	w.scenario("agg", "")
	w.disaggScenarioRouter("disagg", p, "python3, -m, sglang_router.launch_router")
	scen := filepath.Join(w.scenDir, "disagg.yaml")
	w.writeConfig(campaignOpts{scenarios: []string{"agg", "disagg"}})
	run := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", run).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\n%s", err, out)
	}
	for _, want := range []string{
		scen + ": scenario disagg, role router: its router does not run: local: command \"cd ",
		" && env -- python3 -m sglang_router.launch_router --help\" exited with status 1: /usr/bin/python3: Error while finding module specification for 'sglang_router.launch_router' (ModuleNotFoundError: No module named 'sglang_router')\n",
		"nothing was launched",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run's output does not say %q:\n%s", want, out)
		}
	}
	checkNothingLaunched(t, run)

	data, err := os.ReadFile(filepath.Join(run, results.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	r := m.Host.RDMA
	if r == nil || r.Unread != "" {
		t.Fatalf("the manifest's host has no RDMA devices read: %+v", r)
	}
	var here []string
	if entries, err := os.ReadDir("/sys/class/infiniband"); err == nil {
		for _, e := range entries {
			here = append(here, e.Name())
		}
	}
	if !slices.Equal(r.Devices, here) && len(r.Devices)+len(here) > 0 || r.Devices == nil {
		t.Errorf("RDMA devices %q, want %q (this machine's /sys/class/infiniband)", r.Devices, here)
	}
	// The sim moves no KV cache: no scenario's transfer wants RDMA, so no
	// note will say it ran over TCP.
	if len(r.Scenarios) > 0 {
		t.Errorf("scenarios wanting RDMA %q, want none on the sim", r.Scenarios)
	}
}
