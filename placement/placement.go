// Package placement puts a campaign on hosts. Each kind of host (this
// machine, one SSH host, a fleet of SSH hosts, the nodes of a Slurm
// allocation) is a Provider: it acquires the hosts before the campaign and
// releases them after it, however it ended. The orchestrator runs the
// campaign on what a provider acquired and never asks which kind it was;
// the fleet's own failover watches the hosts while rounds run on them.
package placement

import (
	"context"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Provider acquires a campaign's hosts and releases them.
type Provider interface {
	// Acquire connects to (and for an allocation, first obtains) the hosts.
	// An error means the campaign cannot start; whatever was obtained has
	// been released.
	Acquire(ctx context.Context) (*Hosts, error)
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
	switch {
	case c.Host.Slurm != nil:
		return &Slurm{Campaign: c, ResumeDir: resumeDir, Env: env}
	case len(c.Hosts) > 0:
		return &Fleet{Hosts: c.Hosts, Env: env}
	case c.Host.Local:
		return &Local{}
	default:
		return &SSH{Host: c.Host, Env: env}
	}
}
