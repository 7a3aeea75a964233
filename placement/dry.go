package placement

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/slurm"
)

// DryNode names the node of a dry Slurm allocation: no job exists, so no
// node is known.
const DryNode = "NODE"

// DryJob stands for the id of a dry Slurm allocation.
const DryJob = "JOBID"

// Dry places the campaign on hosts that run nothing (remote.Dry), each
// recording what it is asked to do, under the names the campaign's own
// provider would give them. A fleet shows its first host: every host would
// get the same commands. A Slurm campaign shows what it would run on the
// login node, the allocation before the campaign and its release after,
// and what it would run on a node.
type Dry struct {
	Campaign *campaign.Campaign
	// Record receives each line a host records, with the host's name.
	Record func(host, line string)
	h      *remote.Dry
}

var _ Provider = (*Dry)(nil)

// Acquire asks for nothing; with Slurm it records the allocation it would
// ask for.
func (d *Dry) Acquire(context.Context) (*Hosts, error) {
	c := d.Campaign
	name := c.Host.SSH
	switch {
	case c.Host.Slurm != nil:
		d.Record(c.Host.Slurm.Login, slurmRequest(c).Command())
		name = DryNode
	case len(c.Hosts) > 0:
		name = c.Hosts[0].SSH // what {host} in the workdir becomes there
	case c.Host.Local:
		name = remote.NewLocal().Name()
	}
	d.h = remote.NewDry(name, func(line string) { d.Record(name, line) })
	return &Hosts{Hosts: []remote.Host{d.h}}, nil
}

// Release records the release of a Slurm allocation.
func (d *Dry) Release(context.Context) {
	if d.h != nil {
		d.h.Close()
	}
	if s := d.Campaign.Host.Slurm; s != nil {
		d.Record(s.Login, slurm.ReleaseCommand(DryJob))
	}
}
