// Package soak measures a whole campaign from outside: `bakeoff run` as a
// real process over a fleet of namespace hosts (internal/testhost), its
// memory, open files, threads and CPU sampled from /proc at intervals, and
// its run directory audited afterwards for lost requests.
//
// Two campaigns use it, both outside `make test` because they take many
// minutes: the soak (`make soak`, BAKEOFF_SOAK=1), a night of simulated time
// with links cut, a host lost and a server killed along the way, which must
// finish with no measured request lost and flat memory and file counts; and
// the scale measurement (`make scale`, BAKEOFF_SCALE=1), a campaign's
// makespan against the ideal and the orchestrator's cost as scenarios and
// hosts grow. docs/RELIABILITY.md and docs/PERFORMANCE.md carry the figures.
package soak
