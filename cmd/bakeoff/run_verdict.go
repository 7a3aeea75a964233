package main

import (
	"fmt"
	"io"
	"os"

	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// printVerdict rebuilds the verdict from the run's files on disk (as
// `bakeoff report` would), prints the side-by-side table, fitted to width
// columns (0: the default), and writes every report into the run directory.
// A run with no completed scenario has no verdict to give.
func printVerdict(w io.Writer, runDir string, width int) error {
	run, err := results.ReadRun(runDir)
	if err != nil {
		return err
	}
	ok := 0
	for i := range run.Summary.Scenarios {
		if run.Summary.Scenarios[i].Complete() != nil {
			ok++ // a failed rerun still has its earlier complete attempt
		}
	}
	if ok == 0 {
		fmt.Fprintln(w, "No scenario completed: no verdict.")
		return nil
	}
	v, err := verdict.Compute(run, verdict.Options{})
	if err != nil {
		return err
	}
	if err := report.TextWidth(w, v, width); err != nil {
		return err
	}
	return writeReports(runDir, v)
}

// writeReports writes the reports and plots into the run directory.
func writeReports(runDir string, v *verdict.Verdict) error {
	if err := report.WriteAll(runDir, v); err != nil {
		return fmt.Errorf("writing the reports into %s (rebuild them with bakeoff report): %w", runDir, err)
	}
	return nil
}

// isFile reports whether path is a regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
