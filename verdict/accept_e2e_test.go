package verdict

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// e2eEagleArgs make the sim speculative as the seeds' EAGLE-3 topk-4
// variant: 3 steps, 8 draft tokens, so 7 drafts proposed per verify step.
const e2eEagleArgs = "--speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 --enable-metrics"

// scrapeCounters reads the sim's /metrics.
func scrapeCounters(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadgen.ParseMetrics(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAcceptEndToEnd: a real speculative `bakeoff sim` swept by the real
// load generator as an SGLang server. Every response's
// sglext.spec_tokens_details reaches its record, consistent with itself;
// over the level the requests' tokens over their verify steps equal the
// increase of the server's counters exactly; and the level's figure, over
// its steady window, agrees with them within 1%.
func TestAcceptEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sim")
	}
	srv := startSim(t, strings.Fields(e2eEagleArgs)...)
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	c := measure.ConcurrencyLevel(8)
	before := scrapeCounters(t, srv.url)
	var recs []measure.Record
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Options{URL: srv.url, Concurrency: []int{c.Concurrency}, Requests: 96, MaxTokens: e2eMaxTokens,
		IgnoreEOS: true, Prompts: set, Engine: engine.Lookup(engine.SGLang),
		Records: func(r measure.Record) error { recs = append(recs, r); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	after := scrapeCounters(t, srv.url)

	var tokens, steps int
	for _, r := range recs {
		if !r.OK() {
			t.Fatalf("request %d failed: %s", r.Seq, r.Error)
		}
		d, a, ok := r.Draft()
		if r.VerifySteps == nil || !ok || len(r.AcceptHistogram) != 4 {
			t.Fatalf("request %d: verify steps %v, drafts %d/%d (%v), histogram %v: the response's details did not reach the record",
				r.Seq, r.VerifySteps, a, d, ok, r.AcceptHistogram)
		}
		v := *r.VerifySteps
		sum, weighted := 0, 0
		for j, n := range r.AcceptHistogram {
			sum, weighted = sum+n, weighted+j*n
		}
		// SGLang's identities (docs/SIM.md): each verify step gives one
		// token and the drafts it accepted, after the prefill's one.
		if sum != v || weighted != a || d != 7*v || r.Tokens != 1+v+a {
			t.Errorf("request %d: %d tokens, %d steps, %d/%d drafts, histogram %v: inconsistent", r.Seq, r.Tokens, v, a, d, r.AcceptHistogram)
		}
		tokens, steps = tokens+r.Tokens, steps+v
	}
	dGen := after["sglang:generation_tokens_total"] - before["sglang:generation_tokens_total"]
	dVerify := after["sglang:spec_verify_calls_total"] - before["sglang:spec_verify_calls_total"]
	if dVerify <= 0 || float64(tokens) != dGen || float64(steps) != dVerify {
		t.Fatalf("requests: %d tokens in %d verify steps; counters' increase: %v in %v", tokens, steps, dGen, dVerify)
	}
	counters := dGen / dVerify

	l := res.Levels[0]
	if l.AcceptLength == nil || l.AcceptLengthSource != engine.SourceSGLangSpecDetails {
		t.Fatalf("level accept length %v from %q, want the responses' (%q)", l.AcceptLength, l.AcceptLengthSource, engine.SourceSGLangSpecDetails)
	}
	if d := *l.AcceptLength/counters - 1; d > 0.01 || d < -0.01 {
		t.Errorf("level accept length %.4f over the steady window, counters %.4f over the level: %+.2f%%", *l.AcceptLength, counters, 100*d)
	}
	acc, ok := measure.LevelAcceptance(c, recs)
	if !ok || acc.Length != *l.AcceptLength || len(acc.PositionRates) != 3 {
		t.Errorf("LevelAcceptance %+v (%v), want the sweep's %v and three draft positions", acc, ok, *l.AcceptLength)
	}
	t.Logf("accept length %.4f (steady window, %d requests), %.4f (counters over the level); by position %.3f",
		*l.AcceptLength, acc.Requests, counters, acc.PositionRates)
}
