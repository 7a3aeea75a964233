// Package placement puts a campaign on hosts. Each kind of host (this
// machine, one SSH host, a fleet of SSH hosts, the nodes of a Slurm
// allocation) is a Provider: it acquires the hosts before the campaign,
// watches them while it runs, and releases them after it, however it
// ended. The orchestrator runs the campaign on what a provider acquired,
// asks the provider whether a host it doubts is lost, and never asks which
// kind of host it was.
package placement

import (
	"context"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Provider acquires a campaign's hosts, watches them and releases them.
type Provider interface {
	// Plan says what the provider would acquire, without acquiring it.
	Plan() Plan
	// Acquire connects to (and for an allocation, first obtains) the hosts.
	// An error means the campaign cannot start; whatever was obtained has
	// been released.
	Acquire(ctx context.Context) (*Hosts, error)
	// Watch says whether h, one of the acquired hosts, can still be used:
	// nil if it can, else why it is lost (an SSH host that has not answered
	// for the link patience, a node whose allocation ended). It may take up
	// to the link patience to decide, and returns nil when ctx ends first.
	// It is safe to call from several goroutines at once.
	Watch(ctx context.Context, h remote.Host) error
	// Release closes the connections and gives back what Acquire obtained.
	// It must work after Ctrl-C: it takes a context of its own where it
	// needs one.
	Release(ctx context.Context)
}

// Hosts is what a provider acquired.
type Hosts struct {
	// Hosts are the connected hosts, in the campaign's order.
	Hosts []remote.Host
	// Fleet says the hosts are a fleet (hosts:, or an allocation's nodes):
	// rounds go to whichever is free, and a host that fails loses its round.
	// A single host is not a fleet, whose journal lines name no host.
	Fleet bool
	// Unreachable are the hosts of a fleet that could not be connected.
	Unreachable []Loss
	// Deadline, when not zero, is when the hosts stop being usable.
	Deadline time.Time
	// Allocation is the allocation the hosts belong to, for the manifest.
	Allocation *results.Allocation
}

// Plan is what a provider says of its hosts before it acquires them, in
// words that hold for every kind, so that no caller asks which kind it is:
// the dry run's header and recorded commands, the estimate's parallelism,
// the end's message about rounds left out for time.
type Plan struct {
	// Where says where the campaign runs, as the dry run's header names it
	// ("ssh gpu-a", "the nodes of a Slurm allocation through hpc-login").
	Where string
	// Hosts is how many hosts run rounds at once.
	Hosts int
	// Shown is the name of the host whose commands a dry run shows: every
	// host of a fleet gets the same ones.
	Shown string
	// Before and After are what the provider runs on other hosts before
	// the campaign and after it (an allocation and its release).
	Before, After []DryLine
	// Limit says what Hosts.Deadline is, when the kind has one ("in the
	// Slurm allocation, less host.slurm.margin 5m0s"), and ResumeNote what
	// a resume does about it ("it asks for a new allocation"): the end's
	// message about rounds left out for time says both.
	Limit, ResumeNote string
}

// DryLine is one thing a host was asked to do, as a dry run records it.
type DryLine struct {
	// Host names the host.
	Host string
	// On says what the host is when it is not the one whose commands the
	// dry run shows ("the Slurm login node hpc-login"); "" for that one.
	On   string
	Line string
}

// Loss is a host that could not be used, and why.
type Loss struct {
	Host   string
	Reason string
}

// Env is what a provider needs from the process: the environment (for
// ~/.ssh), the clock, and where to say what it does (it never prints).
type Env struct {
	Getenv func(string) string
	Now    func() time.Time
	// Notes receives one line per thing worth telling the person running
	// the campaign (the job's state in the queue, a release).
	Notes func(string)
	// Connected sees each host as it is connected (the CLI warns of ssh
	// config it skipped).
	Connected func(remote.Host)
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e Env) notef(format string, args ...any) {
	if e.Notes != nil {
		e.Notes(fmt.Sprintf(format, args...))
	}
}

func (e Env) connected(h remote.Host) {
	if e.Connected != nil {
		e.Connected(h)
	}
}

// For returns the provider of the campaign's kind of host: the one place
// that asks which kind it is. resumeDir is the run being resumed ("" for a
// new one), whose allocation may still be held.
func For(c *campaign.Campaign, resumeDir string, env Env) Provider {
	p := forKind(c, resumeDir, env)
	if c.LaunchesPerHost > 1 {
		return sharing{Provider: p, per: c.LaunchesPerHost}
	}
	return p
}

// forKind is the provider of the campaign's kind of host.
func forKind(c *campaign.Campaign, resumeDir string, env Env) Provider {
	switch {
	case c.Host.Slurm != nil:
		return &Slurm{Campaign: c, ResumeDir: resumeDir, Env: env}
	case len(c.Hosts) > 0:
		return &Fleet{Hosts: c.Hosts, LinkPatience: c.Host.LinkPatience, PerLaunch: c.NodesPerLaunch(), Env: env}
	case c.Host.Local:
		return &Local{}
	default:
		return &SSH{Host: c.Host, Env: env}
	}
}
