package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// ttftPost sends a streaming completion of prompt and returns its time to
// the first content chunk and its usage.
func ttftPost(t *testing.T, p *simProc, prompt string) (time.Duration, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": "m", "prompt": prompt, "max_tokens": 2, "temperature": 0,
		"ignore_eos": true, "stream": true, "stream_options": map[string]any{"include_usage": true}})
	start := time.Now()
	resp, err := http.Post(p.url("/v1/completions"), "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ttft time.Duration
	var usage map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Choices []struct{ Text string } `json:"choices"`
			Usage   map[string]any          `json:"usage"`
		}
		json.Unmarshal([]byte(data), &ev)
		if ttft == 0 && len(ev.Choices) > 0 && ev.Choices[0].Text != "" {
			ttft = time.Since(start)
		}
		if ev.Usage != nil {
			usage = ev.Usage
		}
	}
	if usage == nil {
		t.Fatalf("no usage in the stream of %.20q…", prompt)
	}
	return ttft, usage
}

// cachedOf is usage.prompt_tokens_details.cached_tokens, -1 when absent.
func cachedOf(usage map[string]any) int {
	d, ok := usage["prompt_tokens_details"].(map[string]any)
	if !ok {
		return -1
	}
	return int(d["cached_tokens"].(float64))
}

func flush(t *testing.T, p *simProc) int {
	t.Helper()
	resp, err := http.Post(p.url("/flush_cache"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// longPrompt is a prompt of n tokens (4n bytes) that differs from others
// of the same n in its first bytes.
func longPrompt(tag string, n int) string {
	return (tag + strings.Repeat("lorem ipsum dolor sit amet ", n/6+1))[:4*n]
}

// TestPrefixCacheServer: with --sim-prefix-cache a repeated long prompt's
// time to first token drops by its prefill and reports its cached tokens
// (with --enable-cache-report, as SGLang: usage.prompt_tokens_details.
// cached_tokens), a flush brings the cost back, a small pool evicts, and
// --disable-radix-cache turns it off; without the knob there is no cache.
func TestPrefixCacheServer(t *testing.T) {
	// At 2× a 4000-token prefill takes 128 ms of wall time (14 ms + 0.06 ms
	// a token, simulated), a cached one under 8 ms. A hit is told from a
	// miss by half the miss's prefill, not by a ratio of the two measured:
	// on a busy machine a hit's few milliseconds grew to 24 against a
	// miss's 72, and the ratio says more of the scheduler than of the cache.
	args := append(strings.Fields(simtest.Baseline), "--sim-speed", "2", "--sim-noise", "0", "--enable-metrics")
	plain := startSim(t, nil, append(args, "--enable-cache-report")...)
	args = append(args, "--sim-prefix-cache")
	on := startSim(t, nil, append(args, "--enable-cache-report")...)
	unreported := startSim(t, nil, args...)
	off := startSim(t, nil, append(args, "--enable-cache-report", "--disable-radix-cache")...)
	small := startSim(t, nil, append(args, "--enable-cache-report", "--max-total-tokens", "6000")...)
	for _, p := range []*simProc{plain, on, unreported, off, small} {
		p.waitHealthy()
	}
	a, b := longPrompt("A", 4000), longPrompt("B", 4000)
	const hit = 3984 // 3999 tokens, in whole pages of 16
	steps := []struct {
		name   string
		p      *simProc
		flush  bool
		prompt string
		cached int  // reported cached tokens; -1: no prompt_tokens_details
		fast   bool // a time to first token of the cached kind
	}{
		{"first sight", on, false, a, -1, false},
		{"repeated", on, false, a, hit, true},
		{"another prompt", on, false, b, -1, false},
		{"the first again", on, false, a, hit, true},
		{"after a flush", on, true, a, -1, false},
		{"repeated after the flush", on, false, a, hit, true},
		{"not reported without --enable-cache-report", unreported, false, a, -1, false},
		{"still a hit without the report", unreported, false, a, -1, true},
		{"no --sim-prefix-cache", plain, false, a, -1, false},
		{"no --sim-prefix-cache, repeated", plain, false, a, -1, false},
		{"disabled", off, false, a, -1, false},
		{"disabled, repeated", off, false, a, -1, false},
		{"small pool", small, false, a, -1, false},
		{"small pool, repeated", small, false, a, hit, true},
		{"small pool, another evicts the first", small, false, b, -1, false},
		{"small pool, the first is gone", small, false, a, -1, false},
	}
	const missFloor, hitCeiling = 80 * time.Millisecond, 64 * time.Millisecond
	// A hit asked again is a hit still, so a hit's time is the least of up
	// to three asks: one stalled by a busy machine's scheduler (108 ms once
	// beside the rest of make test) is asked again. A miss is asked once;
	// a stall only lengthens it. unreportedHits counts the hits on that
	// server, whose counter the end reads.
	unreportedHits := 0
	for _, st := range steps {
		if st.flush && flush(t, st.p) != 200 {
			t.Fatalf("%s: flush refused while idle", st.name)
		}
		ttft, usage := ttftPost(t, st.p, st.prompt)
		for try := 1; st.fast && ttft > hitCeiling && try < 3; try++ {
			if st.p == unreported {
				unreportedHits++
			}
			var again time.Duration
			again, usage = ttftPost(t, st.p, st.prompt)
			ttft = min(ttft, again)
		}
		if st.p == unreported && st.fast {
			unreportedHits++
		}
		if got := cachedOf(usage); got != st.cached {
			t.Errorf("%s: cached_tokens %d, want %d (usage %v)", st.name, got, st.cached, usage)
		}
		if usage["prompt_tokens"] != float64(4000) {
			t.Errorf("%s: prompt_tokens %v, want 4000", st.name, usage["prompt_tokens"])
		}
		if !st.fast {
			if ttft < missFloor {
				t.Errorf("%s: time to first token %v, want a full 4000-token prefill (128 ms)", st.name, ttft)
			}
		} else if ttft > hitCeiling {
			t.Errorf("%s: time to first token %v, want a hit's (under 8 ms; at most %v)", st.name, ttft, hitCeiling)
		}
	}
	if got := metric(t, unreported, "cached_tokens_total"); got != float64(unreportedHits*hit) {
		t.Errorf("sglang:cached_tokens_total %v, want %d (%d hits)", got, unreportedHits*hit, unreportedHits)
	}
	if got := metric(t, unreported, "cache_hit_rate"); got != float64(hit)/4000 {
		t.Errorf("sglang:cache_hit_rate %v, want %v", got, float64(hit)/4000)
	}
	if !strings.Contains(unreported.log.String(), "#new-token: 16, #cached-token: 3984,") {
		t.Errorf("no prefill line with the cached tokens:\n%s", simtest.Tail(unreported.log.String(), 10))
	}
}

// TestFlushRefusedWhileBusy: as SGLang, /flush_cache answers 400 while a
// request runs, and 200 once none does; without a cache, always 200.
func TestFlushRefusedWhileBusy(t *testing.T) {
	p := startSim(t, nil, append(strings.Fields(simtest.Baseline), "--sim-prefix-cache")...)
	plain := startSim(t, nil, strings.Fields(simtest.Baseline)...)
	p.waitHealthy()
	plain.waitHealthy()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, _ := json.Marshal(chatBody("a long answer", 100000))
	req, _ := http.NewRequestWithContext(ctx, "POST", p.url("/v1/chat/completions"), strings.NewReader(string(b)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n') // the request is running
	if got := flush(t, p); got != 400 {
		t.Errorf("flush while a request runs: %d, want 400", got)
	}
	req, _ = http.NewRequestWithContext(ctx, "POST", plain.url("/v1/chat/completions"), strings.NewReader(string(b)))
	other, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Body.Close()
	bufio.NewReader(other.Body).ReadString('\n')
	if got := flush(t, plain); got != 200 {
		t.Errorf("flush without a cache while a request runs: %d, want 200", got)
	}
	cancel()
	resp.Body.Close()
	if !waitFor(t, 5*time.Second, func() bool { return flush(t, p) == 200 }) {
		t.Error("flush still refused after the request went away")
	}
}
