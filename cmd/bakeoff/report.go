package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

var reportUsage = `
Usage: bakeoff report DIR [--format ` + strings.Join(report.FormatNames(), "|") + `] [--detail] [--out FILE] [--write] [--alpha 0.05] [--baseline NAME]

Rebuilds the verdict of the run in DIR from its raw records (requests.jsonl)
alone: no host is contacted. Prints it in the chosen format (text by
default), or writes it to FILE. It changes nothing in DIR unless --write
asks it to rebuild DIR/report/.

  --format    one of (text by default):
` + formatLines() + `
  --detail    with --format text: everything, not only what the end of a
              run shows (the checks, the table, the sentences, the cost):
              every note in full, each level's figures, the categories,
              energy, accept lengths and where the time went (verdict.txt)
  --out       write the report to FILE instead of standard output
  --write     also rewrite DIR/report/ (index.html, the page to look at;
              verdict.txt, verdict.md, summary.csv, verdict.json,
              benchstat.txt and the plots as PNG and SVG) from this verdict,
              --alpha and --baseline included
  --alpha     significance level of the comparisons (default 0.05)
  --baseline  compare against this scenario instead of the run's baseline

Exit 0 on success, 1 when the verdict carries a red fairness note (a failed
scenario, unlike fingerprints, greedy outputs that differ clearly more often
than the baseline's own), 2 on bad input.`

// formatLines lists report.Formats for the usage, one per line.
func formatLines() string {
	var b strings.Builder
	for i, f := range report.Formats {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "                %-10s %s", f.Name, f.Doc)
	}
	return b.String()
}

func init() {
	register(&command{
		Name:    "report",
		Summary: "rebuild a run's verdict, tables and plots from its records",
		Usage:   reportUsage,
		Run:     runReport,
	})
}

type reportFlags struct {
	dir, format, baseline string
	// out is the file the report goes to; "" is standard output.
	out string
	// write rewrites the run's own report files too.
	write bool
	// detail asks the text format for everything (report.Options.Detail).
	detail bool
	alpha  float64
}

func parseReportFlags(e *env, args []string) (*reportFlags, error) {
	f := &reportFlags{}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprintln(e.Stderr, strings.TrimSpace(reportUsage)) }
	fs.StringVar(&f.format, "format", "text", "")
	fs.Float64Var(&f.alpha, "alpha", verdict.DefaultAlpha, "")
	fs.StringVar(&f.baseline, "baseline", "", "")
	fs.StringVar(&f.out, "out", "", "")
	fs.BoolVar(&f.write, "write", false, "")
	fs.BoolVar(&f.detail, "detail", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("usage: bakeoff report DIR [--format %s] [--detail] [--out FILE] [--write] [--alpha 0.05] [--baseline NAME]", strings.Join(report.FormatNames(), "|"))
	}
	f.dir = pos[0]
	if _, ok := report.FormatNamed(f.format); !ok {
		return nil, usagef("--format %q: want one of %s", f.format, strings.Join(report.FormatNames(), ", "))
	}
	if f.alpha <= 0 || f.alpha >= 1 {
		return nil, usagef("--alpha %g: want a number between 0 and 1", f.alpha)
	}
	return f, nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, which it returns in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runReport(_ context.Context, e *env, args []string) int {
	f, err := parseReportFlags(e, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff report: %v\n", err)
		return exitBadInput
	}
	v, code := buildReport(e.Stderr, f.dir, verdict.Options{Alpha: f.alpha, Baseline: f.baseline})
	if v == nil {
		return code
	}
	format, _ := report.FormatNamed(f.format)
	o := report.Options{Detail: f.detail}
	if !f.detail {
		o.Where = report.Where{RunDir: f.dir}
		if page := filepath.Join(f.dir, report.Dir, report.HTMLFile); isFile(page) {
			o.Where.Page = page
		}
	}
	write := func(w io.Writer) error {
		if err := format.Write(w, v, o); err != nil {
			return err
		}
		if f.detail && format.Name == "text" {
			return writePhaseTimes(w, f.dir)
		}
		return nil
	}
	if f.out == "" {
		o.Width = e.columns()
		err = write(e.Stdout)
	} else {
		// A file has no terminal: the renderer's default width, as the
		// run's own report files have.
		err = results.WriteAtomic(f.out, write)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff report: %v\n", err)
		return exitFailed
	}
	if f.write {
		if err := writeReports(f.dir, v); err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff report: %v\n", err)
			return exitFailed
		}
	}
	return code
}

// writePhaseTimes writes where the run's time went, per phase, from its
// journal: the detail's last table, which the verdict cannot give since it
// reads only the records. A run without a journal has nothing to add.
func writePhaseTimes(w io.Writer, dir string) error {
	entries, err := orchestrator.ReadJournal(filepath.Join(dir, results.JournalFile))
	if err != nil {
		return err
	}
	pt := orchestrator.PhaseTimes(entries)
	if len(pt) == 0 {
		return nil
	}
	total := 0.0
	for _, p := range pt {
		total += p.Seconds
	}
	if _, err := fmt.Fprintln(w, "\nWhere the time went:"); err != nil {
		return err
	}
	for _, p := range pt {
		share := 0.0
		if total > 0 {
			share = 100 * p.Seconds / total
		}
		if _, err := fmt.Fprintf(w, "  %-15s %8.1fs  %5.1f%%  (%d×)\n", p.Phase, p.Seconds, share, p.Count); err != nil {
			return err
		}
	}
	return nil
}

// buildReport computes the verdict of the run in dir, changing nothing
// there. It returns the verdict and the exit code the verdict calls for
// (exitFailed when a red fairness note stands), or a nil verdict and the
// exit code of the failure, which it has already reported on stderr.
func buildReport(stderr io.Writer, dir string, o verdict.Options) (*verdict.Verdict, int) {
	run, err := results.ReadRun(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bakeoff report: %v\n", err)
		return nil, exitBadInput
	}
	v, err := judge.Run(run, o)
	if err != nil {
		fmt.Fprintf(stderr, "bakeoff report: %v\n", err)
		return nil, exitBadInput
	}
	for _, n := range v.Notes {
		if n.Severity == verdict.SeverityRed {
			return v, exitFailed
		}
	}
	return v, exitOK
}
