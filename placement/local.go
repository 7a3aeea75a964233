package placement

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// Local places the campaign on this machine.
type Local struct{ h remote.Host }

var _ Provider = (*Local)(nil)

// Plan is this machine, under its own name.
func (l *Local) Plan() Plan {
	return Plan{Where: "local", Hosts: 1, Shown: remote.NewLocal().Name()}
}

// Acquire opens this machine as the host.
func (l *Local) Acquire(context.Context) (*Hosts, error) {
	l.h = remote.NewLocal()
	return &Hosts{Hosts: []remote.Host{l.h}}, nil
}

// Watch has nothing to ask: this machine is there while the campaign runs
// on it.
func (l *Local) Watch(context.Context, remote.Host) error { return nil }

// Release closes it.
func (l *Local) Release(context.Context) {
	if l.h != nil {
		l.h.Close()
	}
}
