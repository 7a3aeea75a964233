// Package e2e runs whole Slurm campaigns against real Slurm clusters of
// one and two nodes (internal/slurmtest) and the simulated engine: the real
// bakeoff binary asks the login node for an allocation, runs the rounds on
// the nodes through the login node, and releases the job when the campaign
// ends, fails or is interrupted; a SIGKILLed campaign's --resume reattaches
// to its job; a node cut off mid-round loses its round to the other node.
// It has no code of its own. The campaigns take minutes, so they run with
// BAKEOFF_SLURM=1 (`make slurm`, which .ci/run runs) and are skipped by
// `make test`.
package e2e
