package sim

import (
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

// The three scenarios of the seeds' campaign in SGLang's spellings as the
// sim follows it (docs/SIM.md): the seeds' deprecated fusion flag is left
// out, as SGLang refuses it on their RTX PRO 6000s (SM120).
var (
	baselineArgs = "--model-path /data/models/Kimi-K2.5-INT4 --tp 8 --cuda-graph-max-bs-decode 128 --attention-backend flashinfer --disable-custom-all-reduce --max-running-requests 256"
	eagleArgs    = " --speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3"
	// topk4Args is the seeds' classic EAGLE worker, which never overlapped:
	// SGLang's synchronous path.
	topk4Args = baselineArgs + eagleArgs + " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 --disable-overlap-schedule"
	// topk1Args is the seeds' spec-v2 run: the overlap worker, which SGLang
	// now runs by default.
	topk1Args = baselineArgs + eagleArgs + " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
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
	{"baseline", baselineArgs, seedsGPU},
	{"eagle3-topk4", topk4Args, seedsGPU},
	{"eagle3-topk1-specv2", topk1Args, seedsGPU},
}

func (s scenario) getenv(k string) string { return s.env[k] }

func (s scenario) fields(extra ...string) []string {
	return append(strings.Fields(s.args), extra...)
}
