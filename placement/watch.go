package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// WatchRetry is the pause between tries while a host does not answer; an
// SSH host reconnects on the next call.
const WatchRetry = time.Second

// pinger is a host that can say whether it answers without running a
// command: remote.SSH asks its sshd, which a login shell slow to start
// (conda or pyenv init in ~/.bashrc, a hung NFS home) cannot delay.
type pinger interface {
	Ping(ctx context.Context) error
}

// answers waits for h to answer, trying for up to patience (the campaign's
// host.link_patience; campaign.DefaultLinkPatience when 0). It returns nil
// once the host answers, or when ctx ends first: a campaign being stopped
// gives up no host. Otherwise the error says for how long the host did not
// answer, wrapping the last try's error.
func answers(ctx context.Context, env Env, h remote.Host, patience time.Duration) error {
	if patience <= 0 {
		patience = campaign.DefaultLinkPatience
	}
	start := env.now()
	for {
		// Each try gets what is left of the patience (at least one retry
		// interval), so a try that hangs cannot stretch the wait to twice it.
		left := max(patience-env.now().Sub(start), WatchRetry)
		pctx, cancel := context.WithTimeout(ctx, left)
		err := answer(pctx, h)
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		if env.now().Sub(start) >= patience {
			return fmt.Errorf("unreachable for %s: %w", patience, err)
		}
		if pause.For(ctx, WatchRetry) != nil {
			return nil
		}
	}
}

// answer asks the host once whether it is there: a ping where the host can
// be pinged, else a trivial command.
func answer(ctx context.Context, h remote.Host) error {
	if p, ok := h.(pinger); ok {
		return p.Ping(ctx)
	}
	_, _, err := h.Run(ctx, "true")
	var exit *remote.ExitError
	if errors.As(err, &exit) {
		return nil // it ran: the host is there
	}
	return err
}
