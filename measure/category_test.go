package measure_test

import (
	"math"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// TestCategoriesAddUp: on a realistic level (the synthetic engine, two
// repeats), the categories' throughputs add up to the level's, their
// request and token counts to the level's, and a category's figures are
// its own records' alone.
func TestCategoriesAddUp(t *testing.T) {
	s := verdicttest.DefaultSweep()
	s.Concurrency, s.Repeats, s.Warmup = []int{8}, 2, 0
	recs := verdicttest.Simulate(verdicttest.Eagle3TopK4, s, 3)
	names := []string{"chat", "code", "math"}
	var repeats [2][]measure.Record
	for _, r := range recs {
		r.Category = names[r.Prompt%3]
		repeats[r.Repeat] = append(repeats[r.Repeat], r)
	}
	cats := measure.Categories(measure.ConcurrencyLevel(8), nil, repeats[0], repeats[1])
	if len(cats) != 3 || cats[0].Category != "chat" || cats[2].Category != "math" {
		t.Fatalf("categories %+v", cats)
	}
	var tokS, sec float64
	var requests, tokens int
	for _, rs := range repeats {
		tp := measure.LevelThroughput(rs, measure.ConcurrencyLevel(8), 1)
		tokS += tp.Tokens
		sec += tp.Window.Seconds()
		requests += len(rs)
		tokens += measure.OKTokens(rs)
	}
	var sumTokS float64
	var sumReq, sumTok int
	for _, c := range cats {
		sumTokS += c.Throughput
		sumReq += c.Requests
		sumTok += c.Tokens
		if c.AcceptLength != nil {
			t.Errorf("%s: an accept length without draft counts", c.Category)
		}
		if c.PerRequestTokS <= 0 || c.TPOTP50 <= 0 {
			t.Errorf("%s: per-request %v tok/s, TPOT p50 %v s", c.Category, c.PerRequestTokS, c.TPOTP50)
		}
	}
	if math.Abs(sumTokS-tokS/sec) > 1e-9*tokS/sec || sumReq != requests || sumTok != tokens {
		t.Errorf("categories add up to %.3f tok/s, %d requests, %d tokens; the level has %.3f, %d, %d",
			sumTokS, sumReq, sumTok, tokS/sec, requests, tokens)
	}
	// One category's share is its own records' tokens in the same windows.
	var codeTok float64
	for _, rs := range repeats {
		w := measure.LevelThroughput(rs, measure.ConcurrencyLevel(8), 1).Window
		var code []measure.Record
		for _, r := range rs {
			if r.Category == "code" {
				code = append(code, r)
			}
		}
		codeTok += measure.TokensIn(code, w)
	}
	if got := cats[1].Throughput; math.Abs(got-codeTok/sec) > 1e-9*got {
		t.Errorf("code: %.3f tok/s, want %.3f", got, codeTok/sec)
	}
}

// TestCategoriesAcceptLength: the accept length comes from each category's
// summed draft counts, failed requests left out; a category that drafted
// nothing has none; a set without categories gives no summaries.
func TestCategoriesAcceptLength(t *testing.T) {
	const ms = int64(1e6)
	r := func(cat string, send, end int64, tokens, drafted, accepted int, fail bool) measure.Record {
		x := measure.Record{Level: measure.ConcurrencyLevel(1), Category: cat, SendNs: send * ms, FirstNs: (send + 10) * ms, EndNs: end * ms,
			Tokens: tokens}
		if drafted > 0 {
			x.DraftTokens, x.DraftAccepted = new(drafted), new(accepted)
		}
		if fail {
			x.ErrClass = measure.ErrCut
		}
		return x
	}
	recs := []measure.Record{
		r("code", 0, 100, 100, 80, 60, false), // 100 tokens in 40 steps
		r("code", 100, 200, 50, 40, 30, false),
		r("code", 200, 300, 999, 999, 998, true), // failed: not counted
		r("chat", 300, 400, 60, 0, 0, false),
		r("", 400, 500, 10, 0, 0, false),
	}
	cats := measure.Categories(measure.ConcurrencyLevel(1), recs)
	if len(cats) != 3 || cats[0].Category != "" || cats[1].Category != "chat" || cats[2].Category != "code" {
		t.Fatalf("categories %+v", cats)
	}
	code := cats[2]
	if code.Requests != 3 || code.OK != 2 || code.Tokens != 150 || code.DraftTokens == nil || *code.DraftTokens != 120 || *code.DraftAccepted != 90 {
		t.Errorf("code %+v", code)
	}
	if code.AcceptLength == nil || math.Abs(*code.AcceptLength-150.0/60) > 1e-12 {
		t.Errorf("code accept length %v, want %v", code.AcceptLength, 150.0/60)
	}
	if cats[1].AcceptLength != nil {
		t.Errorf("chat drafted nothing, yet has accept length %v", *cats[1].AcceptLength)
	}
	// per-request tok/s: 100 tokens in 0.1 s and 50 in 0.1 s.
	if math.Abs(code.PerRequestTokS-750) > 1e-9 {
		t.Errorf("code per-request %v tok/s, want 750", code.PerRequestTokS)
	}
	for i := range recs {
		recs[i].Category = ""
	}
	if got := measure.Categories(measure.ConcurrencyLevel(1), recs); got != nil {
		t.Errorf("no categories, yet %+v", got)
	}
}
