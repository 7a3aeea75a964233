package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// conversationsTrace is a Mooncake-form trace of conversations whose turns
// resend their history: turn k of a conversation names the hash ids of
// turn k−1 and one more, with a partial last block, so rows share prefixes
// as a chat service's do. Rows are 40 ms apart, so each is prefilled before
// the next arrives.
func conversationsTrace(t *testing.T, convs, turns, block int) *prompts.Trace {
	t.Helper()
	var b strings.Builder
	next := int64(0)
	chains := make([][]int64, convs)
	row := 0
	for k := range turns {
		for c := range convs {
			next++
			chains[c] = append(chains[c], next)
			in := (len(chains[c])-1)*block + block/2 + k + c
			ids := make([]string, len(chains[c]))
			for i, h := range chains[c] {
				ids[i] = fmt.Sprint(h)
			}
			fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 4, "hash_ids": [%s]}`+"\n",
				40*row, in, strings.Join(ids, ", "))
			row++
		}
	}
	tr, err := prompts.ParseTrace("conversations.jsonl", []byte(b.String()), block)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReplayPrefixCacheHitRate: a trace whose rows share hash prefixes,
// replayed as token ids against the sim's radix cache matching token by
// token, finds the share of its prompt tokens cached that the trace itself
// implies (prompts.Trace.Stats), within 5%.
func TestReplayPrefixCacheHitRate(t *testing.T) {
	p := startSim(t, nil, "--sim-prefix-cache", "--page-size", "1", "--enable-cache-report")
	p.waitHealthy()
	tr := conversationsTrace(t, 4, 6, 64)
	want := tr.Stats().HitRate
	rf, got := collectRecords()
	res, err := loadgen.Run(ctxT(t, 60e9), loadgen.Options{URL: p.url(""), Engine: engine.Lookup(engine.SGLang),
		Endpoint: loadgen.EndpointCompletions, Speeds: []float64{1}, Trace: tr, Records: rf, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	cached, total := 0, 0
	for i, r := range got() {
		if !r.OK() || r.PromptTokens != tr.Rows[r.Prompt].Input || r.InputTokens != r.PromptTokens {
			t.Fatalf("record %d: %+v: want success and prompt_tokens = input_length %d", i, r, tr.Rows[r.Prompt].Input)
		}
		total += r.PromptTokens
		if r.CachedTokens != nil {
			cached += *r.CachedTokens
		}
	}
	rate := float64(cached) / float64(total)
	t.Logf("%d rows: hit rate %.4f on the sim, %.4f from the trace", len(tr.Rows), rate, want)
	if want < 0.3 || math.Abs(rate-want) > 0.05*want {
		t.Errorf("hit rate %.4f on the sim, %.4f from the trace: want within 5%%", rate, want)
	}
	if res.Levels[0].InputLengths != measure.LengthsExact {
		t.Errorf("lengths %q, want exact (token ids)", res.Levels[0].InputLengths)
	}
}

// TestExactLengthsThroughTokenize: a synthetic set's input lengths are
// exact in the sim's tokens through its /v1/tokenize, as token ids on the
// completions endpoint and as text cut to its length on the chat endpoint;
// an engine without a tokenize call falls back to the words estimate and
// says so.
func TestExactLengthsThroughTokenize(t *testing.T) {
	p := startSim(t, nil)
	p.waitHealthy()
	spec, err := prompts.ParseSynthetic("count=12 input=uniform(min=40,max=400) output=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, engine, endpoint string
		lengths                string
		// chat adds the sim's 4 template tokens to a message's own.
		extra int
	}{
		{"ids", engine.SGLang, loadgen.EndpointCompletions, measure.LengthsExact, 0},
		{"text", engine.SGLang, loadgen.EndpointChat, measure.LengthsExact, 4},
		{"fallback", engine.Generic, loadgen.EndpointCompletions, measure.LengthsEstimated, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set, err := prompts.Synthesize(spec, 7)
			if err != nil {
				t.Fatal(err)
			}
			rf, got := collectRecords()
			res, err := loadgen.Run(ctxT(t, 60e9), loadgen.Options{URL: p.url(""), Engine: engine.Lookup(tt.engine),
				Endpoint: tt.endpoint, Concurrency: []int{4}, Requests: len(set.Prompts), Prompts: set, Records: rf, IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			if l := res.Levels[0].InputLengths; l != tt.lengths {
				t.Errorf("lengths %q, want %q", l, tt.lengths)
			}
			for _, r := range got() {
				want := set.Prompts[r.Prompt].Target
				switch {
				case tt.lengths == measure.LengthsEstimated && r.InputTokens != 0:
					t.Errorf("prompt %d: input_tokens %d on the fallback, want none (estimated)", r.Prompt, r.InputTokens)
				case tt.lengths == measure.LengthsExact && (r.InputTokens != want || r.PromptTokens != want+tt.extra):
					t.Errorf("prompt %d: input_tokens %d, the server's prompt_tokens %d; want %d (+%d)", r.Prompt, r.InputTokens, r.PromptTokens, want, tt.extra)
				}
			}
		})
	}
}

// collectRecords gathers a sweep's records.
func collectRecords() (func(measure.Record) error, func() []measure.Record) {
	var recs []measure.Record
	return func(r measure.Record) error { recs = append(recs, r); return nil },
		func() []measure.Record { return recs }
}
