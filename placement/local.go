package placement

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// Local places the campaign on this machine.
type Local struct{ h remote.Host }

var _ Provider = (*Local)(nil)

// Acquire opens this machine as the host.
func (l *Local) Acquire(context.Context) (*Hosts, error) {
	l.h = remote.NewLocal()
	return &Hosts{Hosts: []remote.Host{l.h}}, nil
}

// Release closes it.
func (l *Local) Release(context.Context) {
	if l.h != nil {
		l.h.Close()
	}
}
