package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/buildinfo"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/report"
	"github.com/bakeoff-dev/bakeoff/results"
)

func init() {
	register(&command{
		Name:    "run",
		Summary: "run a campaign: every scenario's server, the identical sweep, the verdict",
		Usage: `
Usage: bakeoff run CONFIG [--only NAME,...] [--round K] [--out DIR | --resume DIR | --into DIR] [--budget D | --deadline HH:MM] [--dry-run] [--keep-server]

Runs the campaign's rounds on its host; each round launches every scenario
once, in a counterbalanced order (docs/CONFIG.md). With hosts: (a fleet),
each host runs a round at a time, taking the next one when free; a host
that fails (unreachable, GPUs held, servers that cannot load there) is left
out and its round runs again whole on another host. With host.slurm, it
first asks the cluster for an allocation through the login node (showing
the job's state in the queue), runs the rounds on its nodes, and releases
it at the end, on failure and on Ctrl-C or SIGTERM; --resume reattaches to
the run's job while it runs (docs/SLURM.md). Each launch: stop what
runs, wait for free GPU memory, launch the server detached, wait until
healthy, send one smoke request, run the sweep, collect metrics and the log,
stop. A launch that fails is recorded with its phase and log excerpt and the
campaign goes on. Results go to results/CAMPAIGN/RUN/SCENARIO/round-K/ (see
docs/RESULTS.md).

Flags:
  --only NAME,...  run only these scenarios, in every round; with --resume or
                   --into, run them again into that run (the earlier attempt
                   moves to round-K/history/; the verdict uses each round's
                   newest complete attempt)
  --round K        run only round K; with --resume or --into, run its
                   launches again (with --only, only those scenarios')
  --out DIR        write the run into DIR instead of results/CAMPAIGN/RUN
  --resume DIR     continue the run in DIR: finished launches are skipped;
                   refused if the sweep (its fingerprint) or the scenarios
                   changed; a higher rounds: adds rounds
  --into DIR       the same as --resume DIR, named for reruns:
                   bakeoff run CONFIG --only NAME --into DIR
  --results DIR    root for new runs (default results)
  --dry-run        print every command the run would execute; run nothing
  --keep-server    leave the last scenario's server running at the end
  --budget D       the campaign may run for D (e.g. 8h): a round that would
                   end after it is not started (replaces budget: and deadline:)
  --deadline HH:MM the same, ending at that time of day on this machine's
                   clock (the next one to come; replaces budget: and deadline:)

Ctrl-C stops gracefully (the server is stopped, what was measured is kept,
the resume command printed); a second Ctrl-C exits at once.
Exit status: 0 all launches passed, 1 a launch failed or the run was
interrupted, 2 bad input (usage, configuration).`,
		Run: runRun,
	})
}

type runFlags struct {
	config     string
	only       string
	round      int
	out        string
	resume     string
	into       string
	root       string
	dryRun     bool
	keepServer bool
	budget     string
	deadline   string
}

// parseRunFlags accepts flags before and after CONFIG.
func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.only, "only", "", "")
	fs.IntVar(&f.round, "round", 0, "")
	fs.StringVar(&f.out, "out", "", "")
	fs.StringVar(&f.resume, "resume", "", "")
	fs.StringVar(&f.into, "into", "", "")
	fs.StringVar(&f.root, "results", orchestrator.DefaultResultsRoot, "")
	fs.BoolVar(&f.dryRun, "dry-run", false, "")
	fs.BoolVar(&f.keepServer, "keep-server", false, "")
	fs.StringVar(&f.budget, "budget", "", "")
	fs.StringVar(&f.deadline, "deadline", "", "")
	fs.Usage = func() { fmt.Fprintln(stderr, strings.TrimSpace(commands["run"].Usage)) }
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	if len(pos) != 1 {
		return nil, usagef("usage: bakeoff run CONFIG [--only NAME,...] [--round K] [--out DIR | --resume DIR | --into DIR] [--dry-run] [--keep-server]")
	}
	if f.round < 0 {
		return nil, usagef("--round %d: rounds count from 1", f.round)
	}
	if f.into != "" {
		// --into only names a rerun into an existing run for what it is;
		// it goes where --resume goes.
		if f.resume != "" && f.resume != f.into {
			return nil, usagef("--resume %s and --into %s name different runs; --into is --resume under another name", f.resume, f.into)
		}
		f.resume = f.into
	}
	if f.budget != "" && f.deadline != "" {
		return nil, usagef("--budget and --deadline are exclusive: give the time the campaign may take, or when it must end")
	}
	if f.out != "" && f.resume != "" {
		return nil, usagef("--out and --resume (or --into) are exclusive: a resumed run stays in its directory")
	}
	f.config = pos[0]
	return f, nil
}

func runRun(ctx context.Context, e *env, args []string) int {
	f, err := parseRunFlags(args, e.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(e.Stderr, "bakeoff run:", err)
		}
		return exitBadInput
	}
	// The sweep may run in this process (tunnel mode, or a local host).
	tuneGCForMeasurement(e.Getenv)
	c, err := campaign.Load(f.config)
	if err != nil {
		fmt.Fprintln(e.Stderr, err)
		return exitBadInput
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(e.Stderr, "warning:", w)
	}
	var only []string
	if f.only != "" {
		only = strings.Split(f.only, ",")
		for _, name := range only {
			if !slices.ContainsFunc(c.Scenarios, func(s *campaign.Scenario) bool { return s.Name == name }) {
				fmt.Fprintf(e.Stderr, "bakeoff run: --only: no scenario %q in campaign %s\n", name, c.Name)
				return exitBadInput
			}
		}
	}
	if f.round > c.Rounds {
		fmt.Fprintf(e.Stderr, "bakeoff run: --round %d: campaign %s has rounds 1 to %d\n", f.round, c.Name, c.Rounds)
		return exitBadInput
	}

	if f.budget != "" {
		if c.Budget, err = campaign.ParseBudget(f.budget); err != nil {
			fmt.Fprintln(e.Stderr, "bakeoff run: --budget:", err)
			return exitBadInput
		}
		c.Deadline = nil
	}
	if f.deadline != "" {
		clock, err := campaign.ParseClock(f.deadline)
		if err != nil {
			fmt.Fprintln(e.Stderr, "bakeoff run: --deadline:", err)
			return exitBadInput
		}
		c.Deadline, c.Budget = &clock, 0
	}
	opt := orchestrator.Options{
		Campaign: c, Bakeoff: e.Executable, Version: buildinfo.Version(),
		ResultsRoot: f.root, OutDir: f.out, ResumeDir: f.resume, Only: only, Round: f.round,
		KeepServer: f.keepServer,
		Now:        e.Now, Machine: e.Hostname, PID: e.PID,
	}
	if f.resume == "" {
		opt.NoisePrior = noisePrior(e.Stderr, c, f.root)
	}
	count := newLaunchCounter()
	night := planNight(c, f.root, e.Now())
	if c.Sequential() {
		opt.Look = lookFor(c, e.Now, count, night)
	}
	if c.Sequential() || c.Budget > 0 || c.Deadline != nil {
		fmt.Fprintln(e.Stderr, night)
	}
	if r := night.race(); r != "" {
		fmt.Fprintln(e.Stderr, "race: "+r)
	}
	if f.dryRun {
		return runDry(ctx, e, c, opt)
	}

	// The hosts are released however the run ends (a Slurm allocation
	// too); a SIGKILL leaves an allocation to its time limit, and --resume
	// reattaches to it.
	place := placement.For(c, f.resume, placementEnv(e))
	hosts, err := place.Acquire(ctx)
	if err != nil {
		fmt.Fprintln(e.Stderr, "bakeoff run:", err)
		return exitFailed
	}
	defer place.Release(ctx)
	setHosts(&opt, place, hosts)
	hostPlan := place.Plan()
	if end, ok := c.End(e.Now()); ok && (opt.Deadline.IsZero() || end.Before(opt.Deadline)) {
		// A round that would end after the budget or the deadline is not
		// started; the resume command at the end says how to go on.
		opt.Deadline = end
		hostPlan.Limit = "before the campaign's " + budgetName(c)
	}

	// The first Ctrl-C cancels ctx: the orchestrator stops the server and
	// writes what it has. From then on the signals' default action applies,
	// so a second Ctrl-C ends the process at once.
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
			fmt.Fprintln(e.Stderr, "\nbakeoff: stopping gracefully (the server is being stopped); Ctrl-C again to exit at once")
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		case <-stopWatch:
		}
	}()

	prog := newProgress(e, sweepRequests(c.Sweep), count)
	opt.Events = prog.event
	out, err := orchestrator.Run(ctx, opt)
	prog.close()
	if err != nil {
		fmt.Fprintln(e.Stderr, "bakeoff run:", err)
		var fp *orchestrator.FingerprintChangedError
		var pf *orchestrator.PreflightError
		if errors.As(err, &fp) || errors.As(err, &pf) {
			return exitBadInput
		}
		return exitFailed
	}
	printEnd(e, c, f, hostPlan, out)
	if out.Canceled || out.Stopped != "" || out.Failed > 0 || len(out.OutOfTime) > 0 {
		return exitFailed
	}
	return exitOK
}

// placementEnv is the process as the placement providers see it: their
// notes go to stderr, each line timestamped by the provider where it
// matters.
func placementEnv(e *env) placement.Env {
	return placement.Env{Getenv: e.Getenv, Now: e.Now,
		Notes:     func(line string) { fmt.Fprintln(e.Stderr, line) },
		Connected: func(h remote.Host) { printConfigNotes(e, h) }}
}

// setHosts puts what a provider acquired into the orchestrator's options,
// and the provider as the one the fleet asks whether a host is lost.
func setHosts(opt *orchestrator.Options, place placement.Provider, hosts *placement.Hosts) {
	if hosts.Fleet {
		opt.Hosts = hosts.Hosts
	} else {
		opt.Host = hosts.Hosts[0]
	}
	for _, u := range hosts.Unreachable {
		opt.Unreachable = append(opt.Unreachable, orchestrator.HostLoss{Host: u.Host, Reason: u.Reason})
	}
	opt.Deadline, opt.Allocation, opt.Watch = hosts.Deadline, hosts.Allocation, place
}

// printConfigNotes warns of the ssh config's Match blocks a host skipped.
func printConfigNotes(e *env, h remote.Host) {
	if n, ok := h.(interface{ ConfigNotes() []string }); ok {
		for _, note := range n.ConfigNotes() {
			fmt.Fprintf(e.Stderr, "warning: ssh config (%s): %s\n", h.Name(), note)
		}
	}
}

// printEnd writes the end of the run: first what went wrong on the way
// (failed launches, the fleet's hosts), then the verdict's end block
// (report.End), which closes with how the run ended, the resume command when
// there is one, and where the results are, so that the last screen is the
// answer. plan says what the hosts' deadline was, for rounds left out for
// time. Where the time went is in `bakeoff report DIR --format text --detail`.
func printEnd(e *env, c *campaign.Campaign, f *runFlags, plan placement.Plan, out *orchestrator.Outcome) {
	w := e.Stdout
	width := e.columns()
	for _, r := range out.Results {
		if r.Status == results.StatusFailed {
			round := ""
			if c.Rounds > 1 {
				round = fmt.Sprintf(" (round %d)", r.RoundOf())
			}
			fmt.Fprintln(w)
			for _, l := range report.Fold(fmt.Sprintf("FAILED %s%s at %s: %s", r.Name, round, r.FailedPhase, firstLine(r.Reason)), width, "", "  ") {
				fmt.Fprintln(w, l)
			}
		}
	}
	printFleet(w, out)
	fmt.Fprintln(w)
	where := report.Where{RunDir: out.RunDir, Status: endStatus(f, plan, out)}
	v, err := printVerdict(w, out.RunDir, width, where)
	if err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff run: building the verdict: %v\n", err)
	}
	// The host's noise profile learns from every run on it (noise.go).
	recordNoise(e.Stderr, c, f.root, out.RunDir, v)
}

// endStatus says how a run that did not finish ended and how to resume it;
// nil for a run that finished.
func endStatus(f *runFlags, plan placement.Plan, out *orchestrator.Outcome) []string {
	if !out.Canceled && out.Stopped == "" && len(out.OutOfTime) == 0 {
		return nil
	}
	abs, _ := filepath.Abs(out.RunDir)
	resume := fmt.Sprintf("bakeoff run %s --resume %s", campaign.ShellQuote(f.config), campaign.ShellQuote(abs))
	if f.only != "" {
		// An interrupted rerun is finished by the same rerun; without
		// --only, resume would settle for the earlier complete attempt.
		resume += " --only " + campaign.ShellQuote(f.only)
	}
	if f.round > 0 {
		resume += " --round " + strconv.Itoa(f.round)
	}
	switch {
	case out.Stopped != "":
		return []string{fmt.Sprintf("Stopped: %s.", out.Stopped), "Once that is fixed, resume with: " + resume}
	case out.Canceled:
		return []string{"Interrupted. Resume with: " + resume}
	}
	lines := []string{fmt.Sprintf("Out of time: %s not started (not enough time left %s).",
		roundList(out.OutOfTime), cmp.Or(plan.Limit, "on the hosts")), "Resume with: " + resume}
	if plan.ResumeNote != "" {
		lines = append(lines, "("+plan.ResumeNote+")")
	}
	return lines
}

// printFleet says which rounds ran where, which hosts were not used (left
// out before their first round) and why, and which were lost during a
// round.
func printFleet(w io.Writer, out *orchestrator.Outcome) {
	var unused, during []orchestrator.HostLoss
	for _, l := range out.Lost {
		if l.Round == 0 {
			unused = append(unused, l)
		} else {
			during = append(during, l)
		}
	}
	if len(out.Placements) > 0 || len(unused) > 0 {
		fmt.Fprintln(w, "\nRounds by host:")
		var hosts []string
		by := map[string][]string{}
		for _, p := range out.Placements {
			if _, ok := by[p.Host]; !ok {
				hosts = append(hosts, p.Host)
			}
			r := strconv.Itoa(p.Round)
			if len(p.From) > 0 {
				r += " (moved from " + strings.Join(p.From, ", ") + ")"
			}
			by[p.Host] = append(by[p.Host], r)
		}
		slices.Sort(hosts)
		for _, h := range hosts {
			word := "round"
			if len(by[h]) > 1 {
				word = "rounds"
			}
			fmt.Fprintf(w, "  %s: %s %s\n", h, word, strings.Join(by[h], ", "))
		}
		for _, l := range unused {
			fmt.Fprintf(w, "  %s: not used: %s\n", l.Host, firstLine(l.Reason))
		}
	}
	if len(during) > 0 {
		fmt.Fprintln(w, "\nHosts lost:")
		for _, l := range during {
			fmt.Fprintf(w, "  %s during round %d: %s\n", l.Host, l.Round, firstLine(l.Reason))
		}
	}
}

// roundList writes rounds as "round 3" or "rounds 3, 4".
func roundList(rounds []int) string {
	parts := make([]string, len(rounds))
	for i, r := range rounds {
		parts[i] = strconv.Itoa(r)
	}
	if len(rounds) == 1 {
		return "round " + parts[0]
	}
	return "rounds " + strings.Join(parts, ", ")
}

// sweepRequests is how many requests one scenario's sweep sends, warm-up
// included: the length of the live display's sweep bar.
func sweepRequests(s campaign.Sweep) int {
	n := s.Warmup
	for _, c := range s.Levels() {
		n += s.RequestsAt(c) * max(1, s.Repeats)
	}
	return n
}
