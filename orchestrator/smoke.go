package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// Smoke request settings: a short, real completion.
const (
	DefaultSmokeTimeout   = 2 * time.Minute
	DefaultSmokeMaxTokens = 8
	SmokePrompt           = "Say hello in one short sentence."
)

// smoke sends one real completion. A server can pass health and still crash
// on its first real request (the seeds' spec-v2 AttributeError); that fails
// here, with the traceback, not in the middle of the sweep.
func smoke(ctx context.Context, s *scenarioRun) error {
	endpoint, body := s.smokeRequest()
	var status int
	var resp []byte
	// A request lost with the link says nothing about the server: it is
	// sent again once the link is back.
	err := s.w.overLink(ctx, s.sc.Name, "the smoke request", func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, DefaultSmokeTimeout)
		defer cancel()
		var err error
		status, resp, err = postJSON(rctx, freshClient(s.client), endpoint, body)
		return err
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d: %.300s", status, resp)
	}
	if err == nil {
		err = checkCompletion(resp)
	}
	if err != nil {
		return s.crashed(ctx, "smoke", fmt.Sprintf("smoke request to %s failed: %v", endpoint, err), err)
	}
	// A crash right after the answer is still a crash on the first request.
	if !s.serverAlive(ctx) {
		return s.crashed(ctx, "smoke", "server exited after the smoke request", nil)
	}
	return nil
}

// smokeRequest is the endpoint and body of the smoke request, on the
// endpoint the sweep uses.
func (s *scenarioRun) smokeRequest() (string, map[string]any) {
	body := map[string]any{"max_tokens": DefaultSmokeMaxTokens, "temperature": 0, "stream": false}
	if s.sc.Model != "" {
		body["model"] = s.sc.Model
	}
	if s.o.c.Sweep.Endpoint == campaign.EndpointCompletions {
		body["prompt"] = SmokePrompt
		return s.baseURL + "/v1/completions", body
	}
	body["messages"] = []map[string]string{{"role": "user", "content": SmokePrompt}}
	return s.baseURL + "/v1/chat/completions", body
}

// checkCompletion accepts a response with at least one choice.
func checkCompletion(resp []byte) error {
	var r struct {
		Choices []json.RawMessage `json:"choices"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fmt.Errorf("response is not JSON: %v: %.200s", err, resp)
	}
	if len(r.Choices) == 0 {
		return fmt.Errorf("response has no choices: %.200s", resp)
	}
	return nil
}
