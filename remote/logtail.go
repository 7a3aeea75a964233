package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// DefaultLastLines is how many log lines an error message usually quotes.
const DefaultLastLines = 40

// ReadFrom returns the bytes of path on h from offset on, at most max of them
// (max ≤ 0 means no limit), and the offset to read from next time. It reads
// bytes, not lines, so a line of any length (over 64 KiB included) comes back
// whole across calls; a missing file reads as empty. It leaves no process
// behind on the host.
func ReadFrom(ctx context.Context, h Host, path string, offset, max int64) ([]byte, int64, error) {
	rc, err := h.Open(ctx, path, offset)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("%s: reading log %s from %d: %w", h.Name(), path, offset, err)
	}
	defer rc.Close()
	var r io.Reader = rc
	if max > 0 {
		r = io.LimitReader(rc, max)
	}
	data, err := io.ReadAll(&ctxReader{ctx: ctx, r: r})
	next := offset + int64(len(data))
	if err != nil {
		return data, next, fmt.Errorf("%s: reading log %s from %d: %w", h.Name(), path, offset, err)
	}
	return data, next, nil
}

// LastLines returns the last n lines of path on h, for error messages; a
// missing file gives "".
func LastLines(ctx context.Context, h Host, path string, n int) (string, error) {
	if n <= 0 {
		n = DefaultLastLines
	}
	q := QuotePath(path)
	out, _, err := h.Run(ctx, fmt.Sprintf("if [ -e %[1]s ]; then tail -n %[2]d -- %[1]s; fi", q, n))
	if err != nil {
		return "", fmt.Errorf("%s: reading the last %d lines of %s: %w", h.Name(), n, path, err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}
