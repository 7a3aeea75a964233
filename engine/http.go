package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const (
	// callTimeout bounds one reset or info call: a server that does not
	// answer must not hold the sweep.
	callTimeout = 30 * time.Second
	// callBodyBytes bounds what is read of an answer.
	callBodyBytes = 1 << 20
	// resetRetries and resetPause: a reset refused because requests are
	// still finishing is tried again after a pause.
	resetRetries = 3
	resetPause   = time.Second
)

// call sends one request and returns the status and (bounded) body.
func call(ctx context.Context, c *http.Client, method, url, apiKey string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, callBodyBytes))
	return resp.StatusCode, body, err
}

// postReset POSTs an empty body to base+path. A status in unavailable
// means the server has no such call (NoResetError, with why); any other
// non-2xx is retried, then returned as an error. refused, when not nil,
// reads a 2xx answer's body and says why the server did not reset after
// all (vLLM answers 200 {"success": false}); such an answer is retried too.
func postReset(ctx context.Context, c *http.Client, base, path, apiKey string, unavailable map[int]string, refused func(body []byte) string) error {
	var last error
	for try := range resetRetries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(resetPause):
			}
		}
		status, body, err := call(ctx, c, http.MethodPost, base+path, apiKey)
		switch {
		case err != nil:
			last = fmt.Errorf("POST %s: %w", path, err)
		case status >= 200 && status <= 299:
			why := ""
			if refused != nil {
				why = refused(body)
			}
			if why == "" {
				return nil
			}
			last = fmt.Errorf("POST %s: status %d, but %s: %s", path, status, why, excerpt(body))
		case unavailable[status] != "":
			return &NoResetError{Reason: fmt.Sprintf("POST %s: status %d: %s", path, status, unavailable[status])}
		default:
			last = fmt.Errorf("POST %s: status %d: %s", path, status, excerpt(body))
		}
	}
	return last
}

func excerpt(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// CallReset is a prefix-cache reset the campaign names itself
// (prefix_cache.reset, for a server whose engine bakeoff has no profile
// for): "METHOD /path", or "/path" for a POST, with an empty body. Any 2xx
// answer clears the cache; another is retried, then returned as an error.
// It returns the call as the level summaries record it.
func CallReset(ctx context.Context, c *http.Client, base, spec, apiKey string) (string, error) {
	method, path := http.MethodPost, strings.TrimSpace(spec)
	if f := strings.Fields(spec); len(f) == 2 {
		method, path = f[0], f[1]
	}
	did := method + " " + path
	var last error
	for try := range resetRetries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(resetPause):
			}
		}
		status, body, err := call(ctx, c, method, base+path, apiKey)
		switch {
		case err != nil:
			last = fmt.Errorf("%s: %w", did, err)
		case status >= 200 && status <= 299:
			return did, nil
		default:
			last = fmt.Errorf("%s: status %d: %s", did, status, excerpt(body))
		}
	}
	return "", last
}
