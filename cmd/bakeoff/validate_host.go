package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/buildinfo"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
	"github.com/bakeoff-dev/bakeoff/results"
)

// validateOnHost runs the preflight alone on the campaign's hosts (validate
// --host) and prints what it found: the engine builds it asked, the
// warnings, and the problems that would stop a run.
func validateOnHost(ctx context.Context, e *env, c *campaign.Campaign) int {
	place := placement.For(c, "", placementEnv(e))
	hosts, err := place.Acquire(ctx)
	if err != nil {
		fmt.Fprintln(e.Stderr, "bakeoff validate:", err)
		return exitFailed
	}
	defer place.Release(ctx)
	opt := orchestrator.Options{Campaign: c, Bakeoff: e.Executable, Version: buildinfo.Version(),
		Now: e.Now, Machine: e.Hostname, PID: e.PID}
	setHosts(&opt, place, hosts)
	opt.Events = func(ev orchestrator.Event) {
		if ev.Kind == orchestrator.EventWarning {
			fmt.Fprintln(e.Stdout, "warning:", ev.Message)
		}
	}
	fmt.Fprintln(e.Stdout, "\npreflight on the host")
	builds, err := orchestrator.Preflight(ctx, opt)
	for _, b := range builds {
		what := "help " + results.ShortHash(b.HelpHash)
		if b.Version != "" {
			what = "version " + b.Version + ", " + what
		}
		if b.Note != "" {
			what = "not checked"
		}
		fmt.Fprintf(e.Stdout, "  %s: %s (%s): %s\n", b.Host, b.Engine, what, b.Command)
	}
	var pf *orchestrator.PreflightError
	switch {
	case errors.As(err, &pf):
		for _, p := range pf.Problems {
			fmt.Fprintln(e.Stderr, p)
		}
		fmt.Fprintf(e.Stderr, "bakeoff validate: %s on the host\n", plural(len(pf.Problems), "problem"))
		return exitBadInput
	case err != nil:
		fmt.Fprintln(e.Stderr, "bakeoff validate:", err)
		return exitFailed
	}
	unchecked := 0
	for _, b := range builds {
		if b.Note != "" {
			unchecked += len(b.Scenarios)
		}
	}
	if unchecked > 0 {
		fmt.Fprintf(e.Stdout, "ok, but the flags of %s were not checked (see the warnings)\n", plural(unchecked, "scenario"))
		return exitOK
	}
	fmt.Fprintf(e.Stdout, "ok: the engines take every scenario's flags\n")
	return exitOK
}
