package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// printVerdict rebuilds the verdict from the run's files on disk (as
// `bakeoff report` would), writes every report into the run directory and
// prints the end of the run (report.End: the checks, the table, the
// sentences, the cost, then where's Status and the paths), fitted to width
// columns (0: the default). Without a verdict (no scenario completed, or
// the files could not be read) where's lines are printed alone, so that the
// resume command and the results are still the last lines. It returns the
// verdict, nil without one.
func printVerdict(w io.Writer, runDir string, width int, where report.Where) (*verdict.Verdict, error) {
	v, err := endVerdict(runDir)
	if v == nil {
		if err == nil {
			fmt.Fprintln(w, "No scenario completed: no verdict.")
		}
		for _, s := range where.Status {
			fmt.Fprintln(w, s)
		}
		fmt.Fprintf(w, "Results: %s\n", where.RunDir)
		return nil, err
	}
	// The page is written before the end names it.
	werr := writeReports(runDir, v)
	if page := filepath.Join(runDir, report.Dir, report.HTMLFile); werr == nil && isFile(page) {
		where.Page = page
	}
	if err := report.End(w, v, width, where); err != nil {
		return v, err
	}
	return v, werr
}

// endVerdict is the verdict of the run in runDir; nil with no error when
// no scenario completed.
func endVerdict(runDir string) (*verdict.Verdict, error) {
	run, err := results.ReadRun(runDir)
	if err != nil {
		return nil, err
	}
	for i := range run.Summary.Scenarios {
		// A failed rerun still has its earlier complete attempt.
		if run.Summary.Scenarios[i].Complete() != nil {
			return judge.Run(run, verdict.Options{})
		}
	}
	return nil, nil
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
