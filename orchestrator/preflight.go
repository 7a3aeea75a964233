package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/preflight"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// PreflightError is what stops a campaign before its first launch: flags an
// engine on a host refuses, and help commands that failed. Each problem is
// one line, beginning with the file:line:col of the scenario's arg where
// there is one.
type PreflightError struct {
	Problems []string
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("the preflight found %d problem(s); nothing was launched:\n%s", len(e.Problems), strings.Join(e.Problems, "\n"))
}

// preflight asks every host's engines which flags they take and checks
// every scenario this invocation may launch against them, each host at
// once: a flag an engine refuses ends the campaign here, where the whole
// night would otherwise lose that scenario at its first launch, hours in.
func (o *orch) preflight(ctx context.Context) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
		builds   = make([][]results.EngineBuild, len(o.workers))
	)
	for i, w := range o.workers {
		if w.lost != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var found []string
			err := w.campaignPhase(ctx, StepPreflight, func(ctx context.Context) error {
				var err error
				builds[i], found, err = w.preflight(ctx)
				if err == nil && len(found) > 0 {
					err = fmt.Errorf("%d flag(s) the engine refuses", len(found))
				}
				return err
			})
			if o.fleet && len(found) == 0 && errors.Is(err, remote.ErrDisconnected) {
				// The link dropped, which says nothing of the flags: the
				// fleet goes on without the host, as after a failed prepare.
				w.lose(0, "preflight: "+err.Error())
				w.release(ctx)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, found...)
			// One problem a failed command: a help's, a router's.
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, err := range errs {
				var cmd *preflight.CommandError
				var router *routerError
				if errors.As(err, &cmd) || errors.As(err, &router) || len(found) == 0 && err != nil {
					problems = append(problems, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	var changed []string
	o.mu.Lock()
	for _, bs := range builds {
		for _, b := range bs {
			// A resumed run asks again. The same answer replaces the
			// earlier one; another help means another build, and the run
			// keeps both, since its rounds were measured on each.
			i := slices.IndexFunc(o.man.Engines, func(old results.EngineBuild) bool {
				return old.Host == b.Host && old.Command == b.Command && (old.HelpHash == b.HelpHash || old.HelpHash == "" || b.HelpHash == "")
			})
			if i >= 0 {
				o.man.Engines[i] = b
				continue
			}
			if slices.ContainsFunc(o.man.Engines, func(old results.EngineBuild) bool { return old.Host == b.Host && old.Command == b.Command }) {
				changed = append(changed, fmt.Sprintf("%s on %s prints another help than when this run started (help %s): another build measures the rounds from here on",
					b.Engine, b.Host, results.ShortHash(b.HelpHash)))
			}
			o.man.Engines = append(o.man.Engines, b)
		}
	}
	err := o.writeManifest()
	o.mu.Unlock()
	for _, msg := range changed {
		o.warn("", msg)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // Ctrl-C: the help commands did not fail, they were stopped
	}
	if len(problems) > 0 {
		return &PreflightError{Problems: dedupe(problems)}
	}
	if !slices.ContainsFunc(o.workers, func(w *worker) bool { return w.lost == "" }) {
		return errors.New("no host of the fleet is left after the preflight")
	}
	return nil
}

// dryRunner is a host whose answers were not run (remote.Dry): its help
// commands are shown, not read.
type dryRunner interface{ RunsNothing() bool }

// preflight runs the help commands this host's scenarios need, once per
// distinct command (launcher and environment), and checks each scenario's
// rendered flags against the help. It returns the builds it asked, the
// problems that stop the campaign, and an error when a check could not be
// made for a reason that stops it too (a failed help command).
func (w *worker) preflight(ctx context.Context) ([]results.EngineBuild, []string, error) {
	o := w.o
	on := campaign.On{Bakeoff: w.hostBakeoff, Workdir: w.paths.workdir}
	d, ok := w.h.(dryRunner)
	dry := ok && d.RunsNothing()
	type group struct {
		call      *campaign.HelpCall
		engine    string
		scenarios []*campaign.Scenario
	}
	var groups []*group
	for _, sc := range preflightServers(o.c.Scenarios, o.opt.Only) {
		hc, err := campaign.RenderHelp(o.c, sc, on)
		if err != nil {
			return nil, nil, err
		}
		if hc == nil {
			continue // not asked: a launch of its own, a generic server, help: off (docs/CONFIG.md)
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.call.Command == hc.Command })
		if i < 0 {
			groups = append(groups, &group{call: hc, engine: engineName(sc)})
			i = len(groups) - 1
		}
		groups[i].scenarios = append(groups[i].scenarios, sc)
	}
	// The routers' programs, which take none of the engines' flags.
	failed := w.preflightRouters(ctx, on, dry)
	if len(groups) == 0 {
		return nil, nil, errors.Join(failed...)
	}
	caps := w.computeCaps(ctx, slices.ContainsFunc(groups, func(g *group) bool { return g.engine == engine.SGLang }))
	var builds []results.EngineBuild
	var problems []string
	for _, g := range groups {
		b := results.EngineBuild{Host: w.h.Name(), Engine: g.engine, Command: g.call.Command}
		for _, sc := range g.scenarios {
			b.Scenarios = append(b.Scenarios, sc.Name)
		}
		// Probe bounds each command (preflight.HelpTimeout): one that hangs
		// is killed, with what it started, and is a *CommandError naming it.
		help, err := preflight.Probe(ctx, w.h, preflight.Call{Command: g.call.Command, Dir: w.paths.workdir, Engine: g.engine,
			Format: g.call.Format, Underscores: g.call.Underscores, VersionCommand: g.call.VersionCommand})
		var unreadable *preflight.UnreadableError
		switch {
		case dry:
			continue // shown by the dry host; nothing was run to read
		case errors.As(err, &unreadable):
			b.Note = unreadable.Error()
			builds = append(builds, b)
			w.warnOnce("", unreadable.Error())
			continue
		case err != nil:
			failed = append(failed, err)
			continue
		}
		b.HelpHash, b.Version = help.Hash, help.Version
		builds = append(builds, b)
		for _, sc := range g.scenarios {
			p, warnings := w.checkScenario(sc, on, help, caps)
			problems = append(problems, p...)
			for _, msg := range warnings {
				w.warnOnce(sc.Name, msg)
			}
		}
	}
	return builds, problems, errors.Join(failed...)
}

// checkScenario checks one scenario's rendered flags, as the launch renders
// them, against an engine's help; it returns the problems that stop the
// campaign and the warnings, each at the file:line:col of its arg.
func (w *worker) checkScenario(sc *campaign.Scenario, on campaign.On, help *preflight.Help, caps []string) (problems, warnings []string) {
	l, err := campaign.Render(w.o.c, sc, on)
	if err != nil {
		return []string{err.Error()}, nil
	}
	words := l.Argv[l.FlagsAt:]
	findings := help.Table.Check(words)
	if engineName(sc) == engine.SGLang {
		findings = append(findings, preflight.FusionOnGPUs(words, caps, slices.Contains(w.o.c.Engine.Acknowledge, preflight.AckFusion))...)
	}
	// In the order of the files' lines, as a reader goes through them,
	// rather than the flags' rendered (alphabetical) order.
	slices.SortStableFunc(findings, func(a, b preflight.Finding) int {
		return comparePos(sc.ArgAt(l.FlagKeys[a.Word]), sc.ArgAt(l.FlagKeys[b.Word]))
	})
	for _, f := range findings {
		at := sc.ArgAt(l.FlagKeys[f.Word])
		msg := fmt.Sprintf("%s: scenario %s: %s (%s)", at, sc.Name, f.Text, w.buildName(sc, help))
		if f.Severity == preflight.Error {
			problems = append(problems, msg)
		} else {
			warnings = append(warnings, msg)
		}
	}
	return problems, warnings
}

// buildName names the engine build a finding is about: its title, its
// version or help hash, and, in a fleet, the host.
func (w *worker) buildName(sc *campaign.Scenario, help *preflight.Help) string {
	name := engineName(sc)
	if p := sc.Profile(); p != nil {
		name = p.Title
	}
	if help.Version != "" {
		name += " " + help.Version
	} else {
		name += ", help " + results.ShortHash(help.Hash)
	}
	if w.o.fleet {
		name += ", on " + w.h.Name()
	}
	return name
}

// computeCaps reads the host's GPUs' compute capabilities when an SGLang
// scenario may need them (FlashInfer allreduce fusion). A host without GPUs
// (gpu: none), or whose GPU facts prepare could not read (already warned
// about), is not asked; one that cannot answer is a warning.
func (w *worker) computeCaps(ctx context.Context, need bool) []string {
	o := w.o
	if o.c.GPU.None || !need || len(w.facts.GPUs) == 0 {
		return nil
	}
	caps, err := remote.ComputeCaps(ctx, w.h, o.c.GPU.NvidiaSMI)
	if err != nil {
		w.warnOnce("", err.Error())
	}
	return caps
}

func engineName(sc *campaign.Scenario) string {
	if sc.Engine == "" {
		return campaign.DefaultEngine
	}
	return sc.Engine
}

// warnOnce emits a warning the first time its text is seen, naming the
// host in a fleet: the hosts of a fleet running the same build find the
// same things.
func (w *worker) warnOnce(scenario, msg string) {
	o := w.o
	o.mu.Lock()
	if o.warned == nil {
		o.warned = map[string]bool{}
	}
	seen := o.warned[msg]
	o.warned[msg] = true
	o.mu.Unlock()
	if !seen {
		o.emit(Event{Time: o.now(), Kind: EventWarning, Scenario: scenario, Message: msg, Host: w.tag})
	}
}

// comparePos orders two "file:line:col" places: by file, then line, then
// column, numerically.
func comparePos(a, b string) int {
	split := func(p string) (string, int, int) {
		parts := strings.Split(p, ":")
		n := len(parts)
		if n < 3 {
			return p, 0, 0
		}
		line, _ := strconv.Atoi(parts[n-2])
		col, _ := strconv.Atoi(parts[n-1])
		return strings.Join(parts[:n-2], ":"), line, col
	}
	fa, la, ca := split(a)
	fb, lb, cb := split(b)
	if c := strings.Compare(fa, fb); c != 0 {
		return c
	}
	if la != lb {
		return la - lb
	}
	return ca - cb
}

// dedupe keeps the first of equal lines, in order.
func dedupe(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// Preflight runs the preflight alone, as `bakeoff validate --host` does:
// each host is prepared (its workdir, its platform, this binary uploaded
// where the engine command runs it) and its engines asked, every scenario
// checked; no lock is taken, no run directory written, nothing launched.
// Warnings go to opt.Events; it returns the engine builds it asked, and a
// *PreflightError when a flag would be refused or a help command failed.
func Preflight(ctx context.Context, opt Options) ([]results.EngineBuild, error) {
	o, err := newOrch(opt)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(o.workers))
	for i, w := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.campaignPhase(ctx, StepPrepare, w.prepare); err != nil {
				errs[i] = fmt.Errorf("preparing %s: %w", w.h.Name(), err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	err = o.preflight(ctx)
	return o.man.Engines, err
}
