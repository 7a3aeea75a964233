package measure

import (
	"math"
	"slices"
	"testing"
)

// specRec is a successful request of tokens tokens whose response gave its
// verify steps and histogram (SGLang's and vLLM's shape), running from send
// to end, its first token 1 ms after the send.
func specRec(seq int, send, end int64, tokens, steps int, hist ...int) Record {
	r := Record{Level: ConcurrencyLevel(1), Seq: seq, SendNs: send, FirstNs: send + 1e6, EndNs: end, Tokens: tokens,
		VerifySteps: new(steps), AcceptHistogram: hist}
	if len(hist) > 0 {
		acc := 0
		for j, n := range hist {
			acc += j * n
		}
		r.DraftTokens, r.DraftAccepted = new(steps*(len(hist)-1)), new(acc)
	}
	return r
}

// vllmRec is specRec for a vLLM response, whose steps are only those that
// verified drafts (Record.DraftStepsOnly).
func vllmRec(seq int, send, end int64, tokens, steps int, hist ...int) Record {
	r := specRec(seq, send, end, tokens, steps, hist...)
	r.DraftStepsOnly = true
	return r
}

// TestLevelAcceptance: the token-weighted accept length is Σ tokens / Σ
// steps, exactly, when every request lies inside the window, and the
// histograms become step shares and per-position acceptance.
func TestLevelAcceptance(t *testing.T) {
	llama := func(seq int, send, end int64, tokens, drafted, accepted int) Record {
		return Record{Level: ConcurrencyLevel(1), Seq: seq, SendNs: send, FirstNs: send + 1e6, EndNs: end, Tokens: tokens,
			DraftTokens: new(drafted), DraftAccepted: new(accepted)}
	}
	tests := []struct {
		name      string
		level     Level
		recs      []Record
		ok        bool
		length    float64
		rate      float64
		shares    []float64
		positions []float64
	}{
		// C=4 with two requests: no steady state, so the wall window, which
		// holds both whole. 100 tokens in 40 steps and 60 in 20: 160 / 60,
		// not the mean of 2.5 and 3.
		{"verify steps, pooled by tokens", ConcurrencyLevel(4), []Record{
			specRec(0, 0, 4e9, 100, 40, 10, 10, 20),
			specRec(1, 0, 2e9, 60, 20, 0, 10, 10),
		}, true, 160.0 / 60, 80.0 / 120, []float64{10.0 / 60, 20.0 / 60, 30.0 / 60}, []float64{50.0 / 60, 30.0 / 60}},
		// llama.cpp: steps = tokens − accepted: 200 / 100.
		{"draft counts only", ConcurrencyLevel(4), []Record{
			llama(0, 0, 4e9, 120, 100, 60), llama(1, 0, 2e9, 80, 60, 40),
		}, true, 2, 100.0 / 160, nil, nil},
		// A record from before zeros were kept: draft_n alone, none accepted.
		{"old record, draft_n alone", ConcurrencyLevel(4), []Record{
			{Level: ConcurrencyLevel(4), SendNs: 0, FirstNs: 1e6, EndNs: 1e9, Tokens: 16, DraftTokens: new(16)},
		}, true, 1, 0, nil, nil},
		{"no counts", ConcurrencyLevel(4), []Record{{Level: ConcurrencyLevel(4), SendNs: 0, FirstNs: 1e6, EndNs: 1e9, Tokens: 16}}, false, 0, 0, nil, nil},
		{"nothing drafted", ConcurrencyLevel(4), []Record{llama(0, 0, 1e9, 16, 0, 0)}, false, 0, 0, nil, nil},
		// vLLM's num_spec_steps counts the steps that verified drafts only:
		// its accept length is 1 + accepted / steps, not tokens / steps. The
		// captured response (loadgen/testdata/vllm-spec-metrics.sse): 54
		// tokens, 43 steps, 10 accepted, mean_acceptance_length 1.2326.
		// With a second request of 200 tokens whose 100 steps accepted 60
		// (dynamic speculation left some of its steps without drafts):
		// 1 + 70 / 143.
		{"vllm: 1 + accepted / steps", ConcurrencyLevel(4), []Record{
			vllmRec(0, 0, 4e9, 54, 43, 39, 1, 0, 3),
			vllmRec(1, 0, 2e9, 200, 100, 60, 20, 20),
		}, true, 1 + 70.0/143, 70.0 / (129 + 200), []float64{99.0 / 143, 21.0 / 143, 20.0 / 143, 3.0 / 143},
			[]float64{44.0 / 143, 23.0 / 143, 3.0 / 143}},
		{"failed requests do not count", ConcurrencyLevel(4), []Record{
			func() Record { r := specRec(0, 0, 1e9, 50, 10); r.ErrClass = ErrCut; return r }(),
		}, false, 0, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := LevelAcceptance(tt.level, tt.recs)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, got)
			}
			if !ok {
				return
			}
			if math.Abs(got.Length-tt.length) > 1e-12 || math.Abs(got.AcceptRate-tt.rate) > 1e-12 {
				t.Errorf("length %v rate %v, want %v %v", got.Length, got.AcceptRate, tt.length, tt.rate)
			}
			if !nearAll(got.StepShares, tt.shares) || !nearAll(got.PositionRates, tt.positions) {
				t.Errorf("shares %v positions %v, want %v %v", got.StepShares, got.PositionRates, tt.shares, tt.positions)
			}
		})
	}
}

func nearAll(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) < 1e-12 })
}

// TestLevelAcceptanceWindow: over a steady window that cuts requests, each
// counts by the share of its tokens inside it. Requests alike in their
// accept length give that length exactly, however they are cut; a request
// wholly in the ramp (before the window) weighs nothing.
func TestLevelAcceptanceWindow(t *testing.T) {
	const c = 2
	var recs []Record
	// Two slots, 10 requests each of 1 s, sent back to back: 50 tokens in
	// 20 steps (2.5) each, except a first request of 90 tokens in 10 steps
	// that finishes at once, before the C-th send starts the window.
	recs = append(recs, specRec(0, 0, 1e6+1, 90, 10))
	for i := range 10 {
		for s := range c {
			send := int64(i)*1e9 + 2e6 + int64(s)*3e8
			recs = append(recs, specRec(1+i*c+s, send, send+1e9, 50, 20))
		}
	}
	got, ok := LevelAcceptance(ConcurrencyLevel(c), recs)
	if !ok || math.Abs(got.Length-2.5) > 1e-12 {
		t.Fatalf("length %v (ok %v), want 2.5", got.Length, ok)
	}
	if got.Requests >= len(recs) {
		t.Errorf("%d requests counted, the ramp's should not be", got.Requests)
	}
}
