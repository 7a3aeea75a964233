package remote

import (
	"context"
	"fmt"
)

// EnsureDir creates dir on h, with its parents, if it does not exist. A
// leading "~/" is the home directory of the user commands run as. What it
// creates is user-only (0700): a workdir holds pid files, logs and results
// that name hosts and paths. A directory that exists keeps its mode, since
// its owner chose it.
func EnsureDir(ctx context.Context, h Host, dir string) error {
	if dir == "" {
		return fmt.Errorf("%s: creating a directory: empty path", h.Name())
	}
	if _, _, err := h.Run(ctx, "umask 077 && mkdir -p -- "+QuotePath(dir)); err != nil {
		return fmt.Errorf("%s: creating directory %s: %w", h.Name(), dir, err)
	}
	return nil
}
