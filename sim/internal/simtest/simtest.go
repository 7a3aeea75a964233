// Package simtest is what the tests of every room of the sim share: the
// command lines of the seeds' campaign, the three scenarios the sim is
// calibrated on, and small helpers.
package simtest

import "strings"

// The three scenarios of the seeds' campaign in SGLang's spellings as the
// sim follows it (docs/SIM.md): the seeds' deprecated fusion flag is left
// out, as SGLang refuses it on their RTX PRO 6000s (SM120).
const (
	Baseline = "--model-path /data/models/Kimi-K2.5-INT4 --tp 8 --cuda-graph-max-bs-decode 128 --attention-backend flashinfer --disable-custom-all-reduce --max-running-requests 256"
	Eagle    = " --speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3"
	// Topk4 is the seeds' classic EAGLE worker, which never overlapped:
	// SGLang's synchronous path.
	Topk4 = Baseline + Eagle + " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 --disable-overlap-schedule"
	// Topk1 is the seeds' spec-v2 run: the overlap worker, which SGLang
	// now runs by default.
	Topk1 = Baseline + Eagle + " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
)

// NoEnv is an empty environment.
func NoEnv(string) string { return "" }

// Tail is the last n lines of s, for a failure's message.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
