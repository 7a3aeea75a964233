package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// smiGarbage is what a broken nvidia-smi prints: driver errors, lost GPUs,
// values out of range, binary junk, the wrong query's answer.
var smiGarbage = []struct {
	name, out string
}{
	{"driver not loaded", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"},
	{"lost GPU", "Unable to determine the device handle for GPU0000:41:00.0: Unknown Error\n"},
	{"all N/A", "[N/A], [N/A], [N/A], [N/A]\n"},
	{"negative memory", "0, NVIDIA H200, -5, 143771\n"},
	{"overflowing memory", "0, NVIDIA H200, 99999999999999999999999, 143771\n"},
	{"binary", "\x00\xff\xfe\x1b[31m,,,\x00\n"},
	{"too few fields", "0, 12\n"},
	{"words for numbers", "zero, NVIDIA H200, lots, many\n"},
	{"the help text", "NVIDIA System Management Interface -- v550.54.15\n\nnvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...\n"},
}

// TestNvidiaSMIGarbageParsers feeds the garbage to both parsers. None may
// panic, and none may read as "free": junk read as a GPU at 0 MiB, or as
// no compute process at all, would let a launch go ahead on a busy GPU.
// The GPU query must fail outright; the process query may instead name a
// (phantom) holder, which errs on the side of waiting.
func TestNvidiaSMIGarbageParsers(t *testing.T) {
	for _, tc := range smiGarbage {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			if gpus, err := remote.ParseGPUs([]byte(tc.out)); err == nil {
				t.Errorf("ParseGPUs(%q) = %+v, want an error", tc.out, gpus)
			}
			if ps, err := remote.ParseComputeApps([]byte(tc.out)); err == nil && len(ps) == 0 {
				t.Errorf("ParseComputeApps(%q) reads as no process holding memory, want an error", tc.out)
			}
		})
	}
}

// TestNvidiaSMIGarbageOnHost gives the host an nvidia-smi that prints
// garbage: the scenario must fail at the GPU wait with a reason that names
// nvidia-smi, and nothing may be launched or left running.
func TestNvidiaSMIGarbageOnHost(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	smi := filepath.Join(r.host.BinDir, "nvidia-smi")
	if err := os.Remove(smi); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s' '" + strings.ReplaceAll(smiGarbage[0].out, "'", `'\''`) + "'\nexit 0\n"
	if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := spec{name: "smi-garbage", scenarios: []scen{{name: "a"}}}
	cfg := r.write(s)
	out := filepath.Join(r.dir, "run")
	res := r.bakeoff("run", cfg, "--out", out)
	if res.code != 1 {
		t.Fatalf("want exit 1, got %s", res)
	}
	r.checkEndState(out, s, map[string]outcome{
		"a": {status: results.StatusFailed, phase: "gpu-free", reason: "nvidia-smi"},
	})
}
