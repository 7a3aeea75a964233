package main

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// printVerdict rebuilds the verdict from the run's files on disk (as
// `bakeoff report` would), writes every report into the run directory and
// prints the side-by-side table.
func printVerdict(w io.Writer, runDir string) error {
	run, err := results.ReadRun(runDir)
	if err != nil {
		return err
	}
	v, err := verdict.Compute(run, verdict.Options{})
	if err != nil {
		return err
	}
	if err := report.WriteAll(runDir, v); err != nil {
		return fmt.Errorf("writing the reports: %w", err)
	}
	return report.Text(w, v)
}
