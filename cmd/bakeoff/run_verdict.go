package main

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/results"
)

// printVerdict prints the per-level figures of every scenario of the run in
// the seeds' line format.
func printVerdict(w io.Writer, runDir string) error {
	run, err := results.ReadRun(runDir)
	if err != nil {
		return err
	}
	for _, s := range run.Summary.Scenarios {
		fmt.Fprintf(w, "%s (%s, attempt %d)\n", s.Name, s.Status, s.Attempt)
		for _, l := range s.Levels {
			fmt.Fprintln(w, "  "+loadgen.FormatLevel(l))
		}
	}
	return nil
}
