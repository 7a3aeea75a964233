package sim

import "strings"

// The three scenarios of the seeds' campaign, as scenarios/*.yaml render them.
var (
	baselineArgs = "--model-path /data/models/Kimi-K2.5-INT4 --tp 8 --cuda-graph-max-bs 128 --attention-backend flashinfer --enable-flashinfer-allreduce-fusion --disable-custom-all-reduce --max-running-requests 256"
	eagleArgs    = " --speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3"
	topk4Args    = baselineArgs + eagleArgs + " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
	topk1Args    = baselineArgs + eagleArgs + " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)

type scenario struct {
	name string
	args string
	env  map[string]string
}

var seedScenarios = []scenario{
	{"baseline", baselineArgs, nil},
	{"eagle3-topk4", topk4Args, nil},
	{"eagle3-topk1-specv2", topk1Args, map[string]string{SpecV2Env: "1"}},
}

func (s scenario) getenv(k string) string { return s.env[k] }

func (s scenario) fields(extra ...string) []string {
	return append(strings.Fields(s.args), extra...)
}
