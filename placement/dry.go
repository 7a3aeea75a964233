package placement

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// Dry places the campaign on a host that runs nothing (remote.Dry) and
// records what it is asked to do, under the name the campaign's own
// provider gives the host it shows (its Plan): a fleet shows its first
// host, since every host would get the same commands. What the provider
// runs on other hosts before the campaign and after it (a Slurm
// allocation on the login node, and its release) is recorded too, from
// the same Plan, so a new kind of host needs nothing here.
type Dry struct {
	Campaign *campaign.Campaign
	// Record receives each thing a host is asked to do.
	Record func(DryRecord)
	h      *remote.Dry
}

// DryRecord is one thing a host was asked to do in a dry run, and which
// host.
type DryRecord struct {
	remote.DryRecord
	// Host names the host; On says what it is when it is not the one whose
	// commands the dry run shows (DryLine.On), "" for that one.
	Host, On string
}

var _ Provider = (*Dry)(nil)

// Plan is the plan of the campaign's own provider.
func (d *Dry) Plan() Plan { return For(d.Campaign, "", Env{}).Plan() }

// Acquire records what the provider would run before the campaign and
// gives the one recording host.
func (d *Dry) Acquire(context.Context) (*Hosts, error) {
	p := d.Plan()
	for _, l := range p.Before {
		d.Record(dryLine(l))
	}
	d.h = remote.NewDry(p.Shown, func(r remote.DryRecord) { d.Record(DryRecord{DryRecord: r, Host: p.Shown}) })
	hosts := []remote.Host{d.h}
	// A launch over several nodes takes that many hosts: the others record
	// under the name DryNodeName gives them.
	for k := 1; k < d.Campaign.NodesPerLaunch(); k++ {
		name := DryNodeName(p.Shown, k)
		hosts = append(hosts, remote.NewDry(name, func(r remote.DryRecord) { d.Record(DryRecord{DryRecord: r, Host: name}) }))
	}
	return &Hosts{Hosts: hosts, Fleet: len(hosts) > 1}, nil
}

// Watch has nothing to watch: the recording host is always there.
func (d *Dry) Watch(context.Context, remote.Host) error { return nil }

// Release records what the provider would run after the campaign.
func (d *Dry) Release(context.Context) {
	if d.h != nil {
		d.h.Close()
	}
	for _, l := range d.Plan().After {
		d.Record(dryLine(l))
	}
}

func dryLine(l DryLine) DryRecord {
	return DryRecord{DryRecord: remote.DryRecord{Line: l.Line}, Host: l.Host, On: l.On}
}
