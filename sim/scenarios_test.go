package sim

import (
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// seedsGPU is what the calibration scenarios run on. The seeds' build fused
// allreduce on their SM120 GPUs; SGLang as followed fuses only on SM90 and
// SM10x, where it turns fusion on by itself at tp 8 (fusion.go), so the
// scenarios that reproduce the seeds' figures simulate an SM100 GPU.
var seedsGPU = map[string]string{gpu.SimComputeCapEnv: "10.0"}

type scenario struct {
	name string
	args string
	env  map[string]string
}

var seedScenarios = []scenario{
	{"baseline", simtest.Baseline, seedsGPU},
	{"eagle3-topk4", simtest.Topk4, seedsGPU},
	{"eagle3-topk1-specv2", simtest.Topk1, seedsGPU},
}

func (s scenario) getenv(k string) string { return s.env[k] }

func (s scenario) fields(extra ...string) []string {
	return append(strings.Fields(s.args), extra...)
}
