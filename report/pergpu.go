package report

import (
	"fmt"
	"strconv"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Per GPU: when the scenarios hold different numbers of GPUs, the verdict
// compares them per GPU (verdict/pergpu.go). The tables then say so in a
// line above them (verdict.Verdict.PerGPULine) and show each throughput's
// share of one GPU beside it, the figure the change and the winner are of.

// perGPUDigits are the decimals a throughput per GPU is shown with, as a
// throughput is.
const perGPUDigits = 1

// perGPUSuffix is " (96.6/GPU)" after a cell's throughput when its
// comparison is per GPU; empty otherwise.
func perGPUSuffix(c verdict.Cell) string {
	if !c.PerGPU || c.ThroughputPerGPU == nil || !c.Present {
		return ""
	}
	return fmt.Sprintf(" (%s/GPU)", strconv.FormatFloat(c.ThroughputPerGPU.Center, 'f', perGPUDigits, 64))
}

// perGPUParts is perGPUSuffix on the page, its figure marked
// (data-field="throughput-per-gpu").
func perGPUParts(scenario string, level measure.Level, c verdict.Cell) []hPart {
	if perGPUSuffix(c) == "" {
		return nil
	}
	x := c.ThroughputPerGPU.Center
	return []hPart{txt(" ("), num(fieldThroughputPerGPU, scenario, level, 0, x, strconv.FormatFloat(x, 'f', perGPUDigits, 64)), txt("/GPU)")}
}

// perGPUWords is " per GPU" in the names of what is compared (the speedup
// plot's title and axis) when the comparisons are per GPU; empty otherwise.
func perGPUWords(v *verdict.Verdict) string {
	if v.PerGPU {
		return " per GPU"
	}
	return ""
}

// fieldThroughputPerGPU names a throughput per GPU on the page.
const fieldThroughputPerGPU = "throughput-per-gpu"

// hasGPUs reports whether the scenario's GPU count is known: its tables
// then have the throughput per GPU beside the throughput.
func hasGPUs(s *verdict.Scenario) bool { return s.GPUs > 0 }

// perGPUFigure reads a level's throughput per GPU, absent when the
// scenario's GPU count is unknown.
func perGPUFigure(l *verdict.Level) (float64, bool) {
	if l.ThroughputPerGPU == nil {
		return 0, false
	}
	return l.ThroughputPerGPU.Center, true
}
