package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

const diffUsage = `
Usage: bakeoff diff OLD_DIR NEW_DIR [--threshold 3%] [--alpha 0.05] [--history DIR|none] [--force] [--skip-unreadable]

Compares the same scenarios in two runs, level by level, from their raw
records, with the verdict's statistics (one figure per launch, Holm's
correction over every row): old and new throughput, the delta with its
corrected p-value, and the outcome: faster, slower, tie or inconclusive.
When both runs have the same SLO, each scenario's capacity under it is
compared too, in the same corrected family, and a capacity lower by more
than the threshold is a regression as well.
A significant slowdown beyond the threshold is a regression. Runs of one
launch per scenario cannot measure launch-to-launch variation: there a
slowdown under the campaign's min_effect is never a regression.

Two runs are two nights: what is common to one run's launches (the host's
load, clocks, page cache) varies from run to run. Each variant's ratio to
its own run's baseline cancels it and is always judged. A scenario's
absolute figures are judged only against the run-to-run variance learned
from the campaign's history: the other runs of the same campaign, sweep and
host in NEW's folder (or --history DIR), at least 3 of them; with fewer they
are shown, not judged.

  --threshold  the slowdown that counts as a regression, in percent: 3% or 3 (default 3%)
  --alpha      significance level (default 0.05)
  --history    the folder whose runs are the history (default: NEW's parent), or none
  --force      compare runs whose sweep fingerprints or campaigns differ
  --skip-unreadable
               leave out, and list, a run of the history that cannot be
               read (default: it is an error naming the run)

Exit 0 when nothing regressed, 1 on a significant regression beyond the
threshold, 2 on bad input (a run, or a run of the history, that cannot be
read; runs of different campaigns) or when the runs were measured under
different sweeps (the message names the settings that differ).`

func init() {
	register(&command{
		Name:    "diff",
		Summary: "compare two runs level by level; exit 1 on a significant regression",
		Usage:   diffUsage,
		Run:     runDiff,
	})
}

type diffFlags struct {
	old, new string
	// history is the folder whose runs are the history; "" for NEW's
	// parent, "none" for none.
	history string
	opts    rundiff.Options
}

func parseDiffFlags(e *env, args []string) (*diffFlags, error) {
	f := &diffFlags{}
	var threshold string
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprintln(e.Stderr, strings.TrimSpace(diffUsage)) }
	fs.StringVar(&threshold, "threshold", "3%", "")
	fs.Float64Var(&f.opts.Alpha, "alpha", verdict.DefaultAlpha, "")
	fs.BoolVar(&f.opts.Force, "force", false, "")
	fs.StringVar(&f.history, "history", "", "")
	fs.BoolVar(&f.opts.SkipUnreadable, "skip-unreadable", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 2 {
		return nil, usagef("usage: bakeoff diff OLD_DIR NEW_DIR [--threshold 3%%] [--force]")
	}
	f.old, f.new = pos[0], pos[1]
	t, err := parseThreshold(threshold)
	if err != nil {
		return nil, err
	}
	f.opts.Threshold = t
	if f.opts.Alpha <= 0 || f.opts.Alpha >= 1 {
		return nil, usagef("--alpha %g: want a number between 0 and 1", f.opts.Alpha)
	}
	return f, nil
}

// parseThreshold reads "3%" or "3" as the fraction 0.03 (campaign.ParsePercent).
func parseThreshold(s string) (float64, error) {
	// One rule for percentages in configs and on the command line.
	pct, err := campaign.ParsePercent(s)
	if err == nil && pct <= 0 {
		err = fmt.Errorf("must be more than 0%%")
	}
	if err != nil {
		return 0, usagef("--threshold %v", err)
	}
	return pct / 100, nil
}

func runDiff(_ context.Context, e *env, args []string) int {
	f, err := parseDiffFlags(e, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff diff: %v\n", err)
		return exitBadInput
	}
	var runs [2]*results.Run
	for i, dir := range []string{f.old, f.new} {
		if runs[i], err = results.ReadRun(dir); err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff diff: %v\n", err)
			return exitBadInput
		}
	}
	if f.history != "none" {
		dir := f.history
		if dir == "" {
			dir = filepath.Dir(filepath.Clean(f.new))
		} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			fmt.Fprintf(e.Stderr, "bakeoff diff: --history %s: not a folder of runs\n", dir)
			return exitBadInput
		}
		candidates, skipped, err := readRuns(dir, f.opts.SkipUnreadable)
		if err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff diff: %v%s\n", err, unreadableHint(err))
			return exitBadInput
		}
		f.opts.History, f.opts.HistorySkipped = rundiff.HistoryOf(runs[0], runs[1], candidates)
		f.opts.HistorySkipped = append(skipped, f.opts.HistorySkipped...)
	}
	d, err := rundiff.Compare(runs[0], runs[1], f.opts)
	if err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff diff: %v%s\n", err, unreadableHint(err))
		return exitBadInput
	}
	if err := report.DiffText(e.Stdout, d); err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff diff: %v\n", err)
		return exitFailed
	}
	if d.Regressed() {
		return exitFailed
	}
	return exitOK
}

// readRuns reads every run in dir (each folder with a manifest). A run that
// cannot be read is an error naming it (results.UnreadableError) unless
// skip, when it is left out and listed in skipped: a history quietly
// missing a night could hide the night a figure changed.
func readRuns(dir string, skip bool) (runs []*results.Run, skipped []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the runs in %s: %w", dir, err)
	}
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		run := filepath.Join(dir, ent.Name())
		if _, err := os.Stat(filepath.Join(run, results.ManifestFile)); err != nil {
			continue
		}
		r, err := results.ReadRun(run)
		if err != nil && !skip {
			return nil, nil, &results.UnreadableError{Run: run, Err: err}
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", run, err))
			continue
		}
		runs = append(runs, r)
	}
	return runs, skipped, nil
}

// unreadableHint is what to do about a run of a history that cannot be
// read, after its error; empty for any other error.
func unreadableHint(err error) string {
	var u *results.UnreadableError
	if errors.As(err, &u) {
		return "; repair or move that run, or pass --skip-unreadable to leave it out"
	}
	return ""
}
