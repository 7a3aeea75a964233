package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

func init() {
	register(&command{
		Name:    "validate",
		Summary: "check a campaign file and its scenarios; print the resolved campaign",
		Usage: `
Usage: bakeoff validate CONFIG [--results DIR] [--host]

Loads the campaign file CONFIG and every scenario it names, resolves extends,
applies defaults and runs every check. On success prints the resolved
campaign: the host, the sweep and its fingerprint, the rounds and their
launch order, the plan (the night expected), the bounds of its waits, each
scenario's exact launch command, and any warnings; exit 0. Otherwise prints
every problem as file:line:col: message; exit 2. Nothing is run and no host
is contacted, so the flags are not checked against the engine (a note on
stderr says so).

With --host it also runs the preflight a run starts with, on the campaign's
hosts (every host of a fleet; the nodes of a Slurm allocation, asked for and
released): each engine is asked for the flags it accepts (its --help) and
every scenario's flags are checked against them, and the GPUs' compute
capability against the settings that need one. It creates the workdir and
uploads this binary where the engine command runs it, and launches nothing.
A flag the engine refuses, or a help command that fails, is a problem: exit 2.

The plan is the night expected before any round: its rounds, launches, hours
and the MDE expected at the end (with a budget or deadline, what that buys),
one launch's time and where its figures come from, the noise assumed, and the
requests each round sends. A launch's costs come from the newest earlier run
of the campaign in DIR (default results): its launches' load and other steps,
and its seconds per request when it ran the same sweep; else, for the
simulated engine, from its model at its speed; else they are assumed from the
campaign (a third of health_timeout to load, 50 tokens/s a stream), the load
from another campaign's run in DIR that served the same model on the same
host when there is one. The noise is the host's noise profile in DIR when
earlier runs there left one, else assumed (2% a round). The
duration lines bound the waits from the health and GPU timeouts, give the
sweeps' size in requests and tokens, and the typical launch of an earlier run
of the same sweep.`,
		Run: runValidate,
	})
}

func runValidate(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	root := fs.String("results", orchestrator.DefaultResultsRoot, "")
	onHost := fs.Bool("host", false, "")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(e.Stderr, strings.TrimSpace(commands["validate"].Usage))
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(e.Stderr, "usage: bakeoff validate CONFIG [--results DIR] [--host]")
		return exitBadInput
	}
	c, err := campaign.Load(pos[0])
	if err != nil {
		var errs *campaign.Errors
		if errors.As(err, &errs) {
			for _, x := range errs.List {
				fmt.Fprintln(e.Stderr, x.Error())
			}
			fmt.Fprintf(e.Stderr, "bakeoff validate: %s\n", plural(len(errs.List), "problem"))
		} else {
			fmt.Fprintf(e.Stderr, "bakeoff validate: %v\n", err)
		}
		return exitBadInput
	}
	// On a local host the engine command's {bakeoff} is this binary; on an
	// SSH host it is the copy the run uploads, so it stays a placeholder.
	bakeoff := ""
	if c.Host.Local {
		bakeoff = e.Executable
	}
	if err := printCampaign(e.Stdout, c, bakeoff, *root, e.Now()); err != nil {
		fmt.Fprintf(e.Stderr, "bakeoff validate: %v\n", err)
		return exitBadInput
	}
	if *onHost {
		return validateOnHost(ctx, e, c)
	}
	if !c.Engine.HelpOff {
		fmt.Fprintln(e.Stderr, flagsNotChecked)
	}
	return exitOK
}

// flagsNotChecked is what validate says, once, without --host: the flags
// were read as the campaign writes them, and only the engine's own --help,
// on the host where it is installed, says which it takes; a typo'd or
// removed flag passes here.
const flagsNotChecked = "note: the scenarios' flags were not checked against the engine: that needs the engine's own --help, which `bakeoff validate CONFIG --host` asks on the campaign's hosts, as every run does before its first launch"

// printCampaign writes the resolved campaign summary; root is where earlier
// runs are looked for, for the duration estimate.
func printCampaign(w io.Writer, c *campaign.Campaign, bakeoff, root string, now time.Time) error {
	fmt.Fprintf(w, "campaign  %s (%s)\n", c.Name, c.File)
	h := c.Host
	if h.Local {
		fmt.Fprintf(w, "host      local, workdir %s, python %s\n", h.Workdir, h.Python)
	} else {
		accept := ""
		if h.AcceptNew {
			accept = ", accepts a new host key"
		}
		if sl := h.Slurm; sl != nil {
			req := fmt.Sprintf("%d node(s)", sl.Nodes)
			for _, kv := range [][2]string{{"gres", sl.Gres}, {"partition", sl.Partition}, {"account", sl.Account}} {
				if kv[1] != "" {
					req += ", " + kv[0] + " " + kv[1]
				}
			}
			fmt.Fprintf(w, "host      a Slurm allocation through login node %s: %s for %s, rounds kept %s from its end\n",
				sl.Login, req, sl.TimeText, fmtDur(sl.Margin))
			fmt.Fprintf(w, "          on each node: workdir %s, python %s, load runs %s%s\n",
				h.Workdir, h.Python, sweepWhere(h.SweepMode), accept)
		} else if len(c.Hosts) > 0 {
			names := make([]string, len(c.Hosts))
			for i, fh := range c.Hosts {
				names[i] = fh.SSH
			}
			unit := "a round"
			if c.Layout(len(c.Hosts)/c.NodesPerLaunch()).Replicates != nil {
				unit = "a part of a round"
			}
			if per := c.NodesPerLaunch(); per > 1 {
				fmt.Fprintf(w, "hosts     a fleet of %d taken %d at a time (a launch spans %d nodes), %s at a time on each group: ssh %s\n",
					len(c.Hosts), per, per, unit, strings.Join(names, ", "))
			} else {
				fmt.Fprintf(w, "hosts     a fleet of %d, %s at a time on each: ssh %s\n", len(c.Hosts), unit, strings.Join(names, ", "))
			}
			fmt.Fprintf(w, "          on each: workdir %s, python %s, load runs %s%s\n",
				h.Workdir, h.Python, sweepWhere(h.SweepMode), accept)
		} else {
			fmt.Fprintf(w, "host      ssh %s, workdir %s, python %s, load runs %s%s\n",
				h.SSH, h.Workdir, h.Python, sweepWhere(h.SweepMode), accept)
		}
	}
	en := c.Engine
	printSlots(w, c)
	fmt.Fprintf(w, "engine    port %d, health %s every %s for up to %s, stop grace %s\n",
		en.Port, en.HealthPath, fmtDur(en.PollInterval), fmtDur(en.HealthTimeout), fmtDur(en.StopGrace))
	if en.ReadyLine != "" {
		fmt.Fprintf(w, "          ready line %q\n", en.ReadyLine)
	}
	printGPU(w, c.GPU)
	s := c.Sweep
	requests := "auto (" + measure.AutoRule + ")"
	if s.Requests > 0 {
		requests = strconv.Itoa(s.Requests)
	}
	fmt.Fprintf(w, "sweep     %s; requests %s; max_tokens %d; warmup %d\n",
		sweepLevels(s, &requests), requests, s.MaxTokens, s.Warmup)
	fmt.Fprintf(w, "          temperature %s; ignore_eos %t; endpoint %s; repeats %d; seed %d; request timeout %s\n",
		strconv.FormatFloat(s.Temperature, 'g', -1, 64), s.IgnoreEOS, s.Endpoint, s.Repeats, s.Seed, fmtDur(s.RequestTimeout))
	unique := ""
	if s.UniquePrompts {
		unique = "; every request with a prefix of its own (unique_prompts)"
	}
	if c.Trace != nil {
		printTrace(w, c)
	} else {
		fmt.Fprintf(w, "          prompts %s (%s)%s%s\n", promptsShown(c), c.PromptHash, workloadShown(s), unique)
	}
	if s.Sessions != nil {
		fmt.Fprintf(w, "          %s\n", sessionsShown(s))
	}
	fmt.Fprintf(w, "          fingerprint %s\n", c.Fingerprint())
	fmt.Fprintf(w, "baseline  %s\n", c.Baseline)
	printSpaces(w, c)
	printRounds(w, c, root, now)
	for _, sc := range c.Scenarios {
		fmt.Fprintf(w, "\nscenario  %s (%s)\n", sc.Name, sc.File)
		if sc.Description != "" {
			fmt.Fprintf(w, "          %s\n", sc.Description)
		}
		ext := ""
		if sc.Extends != "" {
			ext = ", extends " + sc.Extends
		}
		fmt.Fprintf(w, "          engine %s, model %s%s\n", sc.Engine, sc.Model, ext)
		if how, ok := c.InputLengths()[sc.Engine]; ok {
			fmt.Fprintf(w, "          prompt lengths %s\n", how)
		}
		if sc.Deployment != nil {
			if err := printDeployment(w, c, sc, bakeoff); err != nil {
				return err
			}
			continue
		}
		// The workdir as written: on a fleet it may still hold {host}.
		l, err := campaign.Render(c, sc, campaign.On{Bakeoff: bakeoff, Workdir: c.Host.Workdir})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "          %s\n", l.Command)
		for _, d := range l.Dirs {
			fmt.Fprintf(w, "          creates %s before the launch\n", d)
		}
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintln(w)
		for _, x := range c.Warnings {
			fmt.Fprintf(w, "warning: %s\n", x)
		}
	}
	fmt.Fprintf(w, "\nok: %s, %s\n", plural(len(c.Scenarios), "scenario"), plural(len(c.Warnings), "warning"))
	return nil
}

// printGPU writes the GPU line: the wait for free GPU memory, or that the
// host has none and nothing asks for one.
func printGPU(w io.Writer, g campaign.GPUOpts) {
	if g.None {
		fmt.Fprintln(w, "gpu       none: no wait for free GPU memory, no GPU facts, no power sampler")
		return
	}
	strays := "left alone (the scenario fails)"
	if g.KillStrays {
		strays = "killed"
	}
	smi := ""
	if g.NvidiaSMI != "" {
		smi = fmt.Sprintf(", via %s", g.NvidiaSMI)
	}
	fmt.Fprintf(w, "gpu       free at <= %d MiB used per GPU, wait up to %s%s; strays are %s\n",
		g.MaxUsedMiB, fmtDur(g.WaitTimeout), smi, strays)
}

// promptsShown names the prompt file relative to the config, as the user
// wrote it, rather than by its machine-specific absolute path.
func promptsShown(c *campaign.Campaign) string {
	if c.Sweep.Synthetic != nil {
		return "synthetic " + c.Sweep.Synthetic.String() + ", cut from the built-in text"
	}
	p := c.Sweep.Prompts
	if !filepath.IsAbs(p) {
		return p
	}
	dir, err := filepath.Abs(filepath.Dir(c.File))
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(dir, p); err == nil {
		return rel
	}
	return p
}

// workloadShown says when each prompt asks for its recorded output length.
func workloadShown(s campaign.Sweep) string {
	if s.OutputLengths == prompts.OutputRecorded {
		return "; recorded output lengths as max_tokens"
	}
	return ""
}

func sweepWhere(mode string) string {
	if mode == campaign.SweepOverSSH {
		return "here through an SSH tunnel"
	}
	return "on the host"
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// fmtDur prints a duration without trailing zero units: 30m, not 30m0s.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// sweepLevels is how validate shows the sweep's levels: its concurrencies,
// or its rates with their arrival shape and, for auto, the rate rule.
func sweepLevels(s campaign.Sweep, requests *string) string {
	if len(s.Speeds) > 0 {
		*requests = "every row of the trace"
		return "speeds " + joinSpeeds(s.Speeds) + " (a trace replayed at these multiples of its pace, open loop)"
	}
	if len(s.Rates) == 0 {
		return "concurrency " + joinInts(s.Concurrency)
	}
	if s.Requests == 0 {
		*requests = "auto (" + measure.AutoRateRule + ")"
	}
	rates := make([]string, len(s.Rates))
	for i, r := range s.Rates {
		rates[i] = measure.FormatRate(r)
	}
	shape := "Poisson arrivals"
	if b := s.ArrivalShape(); b != 1 {
		shape = fmt.Sprintf("gamma arrivals, burstiness %g", b)
	}
	return fmt.Sprintf("rates %s req/s (open loop, %s)", strings.Join(rates, ", "), shape)
}
