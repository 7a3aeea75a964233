package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
	"github.com/bakeoff-dev/bakeoff/verdict/policy"
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
	if err := writePolicy(runDir, v); err != nil {
		return fmt.Errorf("writing the serving policy into %s (rebuild it with bakeoff report): %w", runDir, err)
	}
	return nil
}

// writePolicy writes a finished race's serving policy, where it is one
// engine setting, into the run directory: the setting's file and a
// scenario that serves it, for a later race to check against the fixed
// configurations (docs/CONFIG.md, "Checking a serving policy").
func writePolicy(runDir string, v *verdict.Verdict) error {
	if v.Policy == nil || v.Policy.Setting == nil {
		return nil
	}
	s := v.Policy.Setting
	dir, err := filepath.Abs(filepath.Join(runDir, report.PolicyDir))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	config := ""
	if s.ConfigFile != "" {
		config = filepath.Join(dir, s.ConfigFile)
		if err := results.WriteFileAtomic(config, []byte(s.Config)); err != nil {
			return err
		}
	}
	bands := policy.Bands(v.Selection)
	scenario := filepath.Join(dir, report.PolicyScenarioFile)
	header := []string{
		"The serving policy of campaign " + v.Campaign + ", run " + filepath.Base(runDir) + ":",
		policy.Sentence(bands),
		"served by one server: " + s.Source + ".",
	}
	if config != "" {
		header = append(header, "The setting's file is "+config+":",
			"on another host, copy it there and change the path below.")
	}
	header = append(header,
		"",
		"To check that it delivers the best of the configurations it switches",
		"between at every level, race it against them (docs/CONFIG.md,",
		"\"Checking a serving policy\"):",
		"  question: select",
		"  "+policyCheckKey+"["+strings.Join(append(policy.Fixed(bands), scenario), ", ")+"]",
	)
	data, err := s.ScenarioYAML(config, header)
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(scenario, data)
}

// policyCheckKey starts the line of the policy scenario's header that lists
// the check's scenarios (scripts/demo-policy.sh reads it).
const policyCheckKey = "scenarios: "

// isFile reports whether path is a regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
