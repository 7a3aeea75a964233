package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// DefaultLinkRetry is the pause between tries while the link to the host is
// down; the SSH host reconnects on the next call.
const DefaultLinkRetry = time.Second

// overLink runs fn, and runs it again while it fails because the link to the
// host dropped (remote.ErrDisconnected), for up to the link patience. A
// detached server or sweep lives on meanwhile, so a drop is worth waiting
// out rather than failing a scenario that is measuring fine. fn must be safe
// to repeat.
func (w *worker) overLink(ctx context.Context, scenario, what string, fn func(context.Context) error) error {
	o := w.o
	err := fn(ctx)
	if !errors.Is(err, remote.ErrDisconnected) {
		return err
	}
	w.warn(scenario, fmt.Sprintf("%s: the link to %s dropped (%v); retrying", what, w.h.Name(), err))
	start := o.now()
	for errors.Is(err, remote.ErrDisconnected) && o.now().Sub(start) < o.linkPatience {
		if serr := pause.For(ctx, DefaultLinkRetry); serr != nil {
			return serr
		}
		err = fn(ctx)
	}
	return err
}

// startOverLink starts a detached process, surviving a link that drops
// during the start: the process may have started anyway, so after the drop
// its pid file is asked first, and it is started again only if no process
// was started. A process that started and already ended counts as started:
// starting a finished sweep again would append a second sweep's records to
// its files, and starting a server that crashed at once would hide the
// crash.
func (w *worker) startOverLink(ctx context.Context, scenario string, spec remote.ProcessSpec) error {
	_, err := remote.Start(ctx, w.h, spec)
	if !errors.Is(err, remote.ErrDisconnected) {
		return err
	}
	return w.overLink(ctx, scenario, "starting "+spec.PIDFile, func(ctx context.Context) error {
		started, err := remote.Started(ctx, w.h, spec.PIDFile)
		if err != nil || started {
			return err
		}
		_, err = remote.Start(ctx, w.h, spec)
		return err
	})
}
