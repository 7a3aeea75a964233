package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// DefaultProbeTimeout bounds one health probe or metrics scrape.
const DefaultProbeTimeout = 10 * time.Second

// hostHTTPClient talks to ports on the host as the host sees them: every
// connection is dialed through the host (an SSH channel, or directly for the
// local host), so 127.0.0.1 means the host's loopback.
func hostHTTPClient(h remote.Host) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return h.Dial(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: tr}
}

// freshClient is c without connection reuse. A POST is not sent twice, so
// it must not go out on a kept-alive connection that the server may have
// closed since its last answer (llama.cpp's llama-server closes after every
// streamed answer; servers and proxies close idle connections).
func freshClient(c *http.Client) *http.Client {
	tr, ok := c.Transport.(*http.Transport)
	if !ok {
		return c
	}
	tr = tr.Clone()
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr}
}

// get fetches url and returns the status and body.
func get(ctx context.Context, c *http.Client, url string, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

// postJSON sends body as JSON and returns the status and response body.
func postJSON(ctx context.Context, c *http.Client, url string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, out, fmt.Errorf("reading the response: %w", err)
	}
	return resp.StatusCode, out, nil
}
