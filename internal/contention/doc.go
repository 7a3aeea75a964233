// Package contention measures whether a campaign keeps identical servers
// identical when other processes compete for the machine's CPU, as they do
// on a developer's laptop during a build or on a GPU host whose CPUs also
// run a tokenizer, a data loader or someone else's job.
//
// It has two parts. The loads (load.go, worker.go) are CPU contention of a
// few kinds that a test starts and stops itself, as processes of its own
// (re-executions of the test binary), stopped by their process group: a
// build's many short processes on every core, one core kept busy, one core
// busy in pulses. The statistics (calls.go, signs.go) read a campaign's
// verdict for false calls between identical scenarios and test the signs of
// their paired differences over levels and campaigns.
//
// The campaigns themselves are in the package's tests: `bakeoff run` as a
// real process, the demo's scenario files (the baseline, the baseline with
// FlashInfer allreduce fusion forced off, and an exact twin of the
// baseline) served by `bakeoff sim`, under each kind of load. `make
// contention` (BAKEOFF_CONTENTION=1) runs 40 campaigns per kind and gives
// the false-call rate of each; `make test` runs a short version.
// docs/METHOD.md ("Identical servers under contention") has the figures.
package contention
