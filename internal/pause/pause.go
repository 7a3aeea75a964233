// Package pause waits for a while unless the context ends first: the one
// wait every poll loop (health, GPU memory, a host coming back) needs.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, and returns ctx's error then.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
