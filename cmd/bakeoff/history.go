package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/history"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
)

const historyUsage = `
Usage: bakeoff history CAMPAIGN_DIR [--scenario S] [--level C] [--html FILE] [--json] [--skip-unreadable]

Every run of a campaign on one host, oldest first: one scenario's
throughput at each level with its interval, run by run, and the change
points E-divisive means finds in that series (a permutation test at
p < 0.05 over every level at once), each with the run that introduced it
and how much the figures moved. A nightly baseline-only campaign read this
way is a regression monitor.

CAMPAIGN_DIR is the folder of the campaign's runs (results/CAMPAIGN). The
runs followed are those of the newest run's host and sweep; the others are
listed as left out. A run that cannot be read is an error naming it, since
a history quietly missing a night could hide the night a figure changed;
--skip-unreadable leaves it out and lists it instead.

  --scenario  the scenario to follow (default: the newest run's baseline)
  --level     one level alone, e.g. 8 or C=8 (default: every level)
  --html      also write the trend as an HTML page with an SVG chart
  --json      print the series as JSON instead of text
  --skip-unreadable
              leave out, and list, a run that cannot be read

Exit 0, or 2 on bad input: not a folder of runs, fewer than two runs, a
run that cannot be read, an unknown scenario or level.`

func init() {
	register(&command{
		Name:    "history",
		Summary: "one scenario's figures over every run of a campaign on a host, with change points",
		Usage:   historyUsage,
		Run:     runHistory,
	})
}

func runHistory(_ context.Context, e *env, args []string) int {
	var scenario, level, htmlOut string
	var asJSON, skipUnreadable bool
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprintln(e.Stderr, strings.TrimSpace(historyUsage)) }
	fs.StringVar(&scenario, "scenario", "", "")
	fs.StringVar(&level, "level", "", "")
	fs.StringVar(&htmlOut, "html", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&skipUnreadable, "skip-unreadable", false, "")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fail := func(err error) int {
		fmt.Fprintf(e.Stderr, "bakeoff history: %v\n", err)
		return exitBadInput
	}
	if err != nil {
		return fail(err)
	}
	if len(pos) != 1 {
		return fail(usagef("usage: bakeoff history CAMPAIGN_DIR [--scenario S] [--level C] [--html FILE] [--json]"))
	}
	dir := pos[0]
	o := history.Options{Scenario: scenario, SkipUnreadable: skipUnreadable}
	if level != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(level, "C="))
		if err != nil || n < 1 {
			return fail(fmt.Errorf("--level %q: want a concurrency, e.g. 8 or C=8", level))
		}
		c := measure.ConcurrencyLevel(n)
		o.Level = &c
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail(fmt.Errorf("%s: not a folder of runs", dir))
	}
	runs, skipped, err := readRuns(dir, skipUnreadable)
	if err != nil {
		return fail(fmt.Errorf("%w%s", err, unreadableHint(err)))
	}
	if len(runs) == 0 {
		if _, err := os.Stat(filepath.Join(dir, results.ManifestFile)); err == nil {
			return fail(fmt.Errorf("%s is one run; give the folder of its campaign's runs (%s)", dir, parentOf(dir)))
		}
		return fail(fmt.Errorf("%s holds no run (no folder with a %s)%s", dir, results.ManifestFile, skippedWords(skipped)))
	}
	s, err := history.Of(runs, o)
	if err != nil {
		return fail(fmt.Errorf("%s: %w%s%s", dir, err, skippedWords(skipped), unreadableHint(err)))
	}
	s.Skipped = append(skipped, s.Skipped...)
	if htmlOut != "" {
		if err := results.WriteAtomic(htmlOut, func(w io.Writer) error { return report.HistoryHTML(w, s) }); err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff history: writing %s: %v\n", htmlOut, err)
			return exitFailed
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff history: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if err := report.HistoryText(e.Stdout, s); err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff history: %v\n", err)
		return exitFailed
	}
	if htmlOut != "" {
		fmt.Fprintf(e.Stdout, "trend: %s\n", htmlOut)
	}
	return exitOK
}

// skippedWords is "; left out: A: why; B: why", or "".
func skippedWords(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return "; left out: " + strings.Join(skipped, "; ")
}

func parentOf(dir string) string { return filepath.Dir(filepath.Clean(dir)) }
