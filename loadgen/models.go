package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

const (
	// modelsBodyBytes bounds the /v1/models answer read.
	modelsBodyBytes = 1 << 20
	// modelsTimeout bounds the model look-up, so a server that accepts the
	// connection and never answers cannot hang the sweep before it starts.
	modelsTimeout = 30 * time.Second
)

// FirstModel asks the server's /v1/models for the models it serves and
// returns the first id. base is the server URL without a trailing slash.
func FirstModel(ctx context.Context, c *http.Client, base, apiKey string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return "", fmt.Errorf("asking %s for its model: %w", base, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking %s for its model: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, modelsBodyBytes))
	if err != nil {
		return "", fmt.Errorf("asking %s for its model: %w", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("asking %s for its model: HTTP %d: %s", base, resp.StatusCode, excerpt(body))
	}
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("asking %s for its model: bad /v1/models answer: %w", base, err)
	}
	if len(m.Data) == 0 || m.Data[0].ID == "" {
		return "", fmt.Errorf("asking %s for its model: /v1/models lists none; pass the model name", base)
	}
	return m.Data[0].ID, nil
}
