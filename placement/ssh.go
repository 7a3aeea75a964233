package placement

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// SSH places the campaign on one SSH host.
type SSH struct {
	Host campaign.Host
	Env  Env
	h    remote.Host
}

var _ Provider = (*SSH)(nil)

// Plan is the one host, under its name in the campaign.
func (s *SSH) Plan() Plan {
	return Plan{Where: "ssh " + s.Host.SSH, Hosts: 1, Shown: s.Host.SSH}
}

// Acquire connects to the host; a host that cannot be reached stops the
// campaign.
func (s *SSH) Acquire(ctx context.Context) (*Hosts, error) {
	h, err := dialSSH(ctx, s.Env, s.Host)
	if err != nil {
		return nil, err
	}
	s.Env.connected(h)
	s.h = h
	return &Hosts{Hosts: []remote.Host{h}}, nil
}

// Watch waits for the host to answer, for up to host.link_patience: a link
// that dropped and comes back within it loses nothing.
func (s *SSH) Watch(ctx context.Context, h remote.Host) error {
	return answers(ctx, s.Env, h, s.Host.LinkPatience)
}

// Release closes the connection.
func (s *SSH) Release(context.Context) {
	if s.h != nil {
		s.h.Close()
	}
}

// Fleet places the campaign on several SSH hosts (hosts:), connected at
// once. A host that cannot be reached is left out, named in Unreachable;
// the orchestrator records it as lost before its first round, and the
// campaign runs on the others.
type Fleet struct {
	Hosts []campaign.Host
	// LinkPatience is how long a host may not answer before it is lost
	// (host.link_patience).
	LinkPatience time.Duration
	// PerLaunch is how many hosts one launch takes (a deployment over
	// several nodes: campaign.NodesPerLaunch); 0 or 1 for one.
	PerLaunch int
	Env       Env
	up        []remote.Host
}

var _ Provider = (*Fleet)(nil)

// Plan is the hosts under their names in the campaign; a dry run shows the
// first, since every host gets the same commands.
func (f *Fleet) Plan() Plan {
	names := make([]string, len(f.Hosts))
	for i, h := range f.Hosts {
		names[i] = h.SSH
	}
	shown := ""
	if len(names) > 0 {
		shown = names[0]
	}
	where := "a fleet of " + strings.Join(names, ", ") + " (every host gets the same commands; shown for " + shown + ")"
	if f.PerLaunch > 1 {
		where = fmt.Sprintf("a fleet of %s, taken %d at a time (%s)", strings.Join(names, ", "), f.PerLaunch, groupsWord(len(names), f.PerLaunch))
	}
	return Plan{Where: where, Hosts: max(len(f.Hosts)/max(f.PerLaunch, 1), 1), Shown: shown}
}

// Acquire connects every host; it fails only by leaving hosts out.
func (f *Fleet) Acquire(ctx context.Context) (*Hosts, error) {
	hosts := make([]remote.Host, len(f.Hosts))
	errs := make([]error, len(f.Hosts))
	var wg sync.WaitGroup
	for i, h := range f.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hosts[i], errs[i] = dialSSH(ctx, f.Env, h)
		}()
	}
	wg.Wait()
	out := &Hosts{Fleet: true}
	for i, h := range hosts {
		if errs[i] != nil {
			out.Unreachable = append(out.Unreachable, Loss{Host: f.Hosts[i].SSH, Reason: "cannot be reached: " + errs[i].Error()})
			continue
		}
		f.Env.connected(h)
		out.Hosts = append(out.Hosts, h)
	}
	f.up = out.Hosts
	return out, nil
}

// Watch waits for the host to answer, for up to the link patience.
func (f *Fleet) Watch(ctx context.Context, h remote.Host) error {
	return answers(ctx, f.Env, h, f.LinkPatience)
}

// Release closes the connections.
func (f *Fleet) Release(context.Context) {
	for _, h := range f.up {
		h.Close()
	}
}

// dialSSH connects to an SSH host of the campaign as OpenSSH would: the
// alias from ~/.ssh/config, keys checked against known_hosts (a new one added
// only with host.accept_new), agent and identity files for auth.
func dialSSH(ctx context.Context, env Env, h campaign.Host) (remote.Host, error) {
	return remote.DialSSH(ctx, remote.SSHOptions{Target: h.SSH, AcceptNew: h.AcceptNew, Getenv: env.Getenv})
}
