package main

import "runtime/debug"

// Garbage-collector settings while bakeoff measures. The collector's pauses
// and assist work land on whichever stream is being timed, and they were the
// largest part of the client's own timing tail (docs/PERFORMANCE.md: p99 at
// C=64 about halved). The load generator's heap is small and bounded (one
// level's records), so collecting less often costs little memory; the soft
// limit keeps that true.
const (
	measureGCPercent   = 800
	measureMemoryLimit = 2 << 30 // bytes
)

// tuneGCForMeasurement applies the settings above unless the user set GOGC
// or GOMEMLIMIT, which then win.
func tuneGCForMeasurement(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(measureGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(measureMemoryLimit)
	}
}
