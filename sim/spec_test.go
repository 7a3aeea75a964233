package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// specTokensDetails is sglext.spec_tokens_details as SGLang PR #33518
// documents it (and meta_info's spec_* fields of /generate).
type specTokensDetails struct {
	AcceptRate      *float64 `json:"spec_accept_rate"`
	AcceptLength    *float64 `json:"spec_accept_length"`
	CorrectDrafts   *int     `json:"spec_num_correct_drafts"`
	ProposedDrafts  *int     `json:"spec_num_proposed_drafts"`
	VerifyCt        *int     `json:"spec_verify_ct"`
	DraftsHistogram []int    `json:"spec_correct_drafts_histogram"`
}

// check tests the identities SGLang's fields keep for a request of
// completion tokens on a server of steps speculative steps verifying
// draftTokens tokens per step.
func (d specTokensDetails) check(completion, steps, draftTokens int) error {
	if d.AcceptRate == nil || d.AcceptLength == nil || d.CorrectDrafts == nil || d.ProposedDrafts == nil || d.VerifyCt == nil || d.DraftsHistogram == nil {
		return fmt.Errorf("a field is missing: %+v", d)
	}
	v, c := *d.VerifyCt, *d.CorrectDrafts
	sum, weighted := 0, 0
	for i, n := range d.DraftsHistogram {
		sum += n
		weighted += i * n
	}
	switch {
	case v < 1:
		return fmt.Errorf("spec_verify_ct %d", v)
	case *d.AcceptLength != float64(completion)/float64(v):
		return fmt.Errorf("spec_accept_length %v, want completion_tokens / spec_verify_ct = %d/%d", *d.AcceptLength, completion, v)
	case *d.ProposedDrafts != v*(draftTokens-1):
		return fmt.Errorf("spec_num_proposed_drafts %d, want %d × %d", *d.ProposedDrafts, v, draftTokens-1)
	case math.Abs(*d.AcceptRate-float64(c)/float64(*d.ProposedDrafts)) > 1e-12:
		return fmt.Errorf("spec_accept_rate %v, want %d/%d", *d.AcceptRate, c, *d.ProposedDrafts)
	case len(d.DraftsHistogram) != steps+1 || sum != v || weighted != c:
		return fmt.Errorf("histogram %v: want %d buckets summing to %d, weighted to %d", d.DraftsHistogram, steps+1, v, c)
	case completion != 1+v+c:
		return fmt.Errorf("completion_tokens %d, want 1 + verify %d + correct drafts %d", completion, v, c)
	}
	return nil
}

// TestSpecCounts: in the scheduler every request's counts keep SGLang's
// identities, at every length, cut short by max_tokens or not.
func TestSpecCounts(t *testing.T) {
	for _, name := range []string{"eagle3-topk4", "eagle3-topk1-specv2"} {
		cfg := simtest.Config(t, cmdline.ParseArgs, name)
		s := model.NewScheduler(model.NewPerf(cfg), 256, 8192, rand.New(rand.NewPCG(5, 5)))
		var jobs []*model.Job
		for _, target := range []int{1, 2, 3, 7, 50, 200, 513} {
			j := &model.Job{PromptTokens: 10, Target: target}
			jobs = append(jobs, j)
			s.Add(j)
		}
		for !s.Idle() {
			s.Step()
		}
		for _, j := range jobs {
			if j.Spec.VerifySteps != j.VerifySteps {
				t.Errorf("%s %d tokens: %d verify steps counted, %d taken", name, j.Target, j.Spec.VerifySteps, j.VerifySteps)
			}
			if j.VerifySteps == 0 {
				continue
			}
			var d specTokensDetails
			b, _ := json.Marshal(j.Spec.Details(j.Generated, cfg.DraftTokens()))
			json.Unmarshal(b, &d)
			if err := d.check(j.Generated, cfg.SpecSteps, cfg.DraftTokens()); err != nil {
				t.Errorf("%s %d tokens: %v", name, j.Target, err)
			}
		}
	}
}

// specBody is a completion request that asks for the speculative details.
func specBody(chat, stream bool, prompt string, n int) map[string]any {
	b := map[string]any{"model": "m", "max_tokens": n, "temperature": 0, "ignore_eos": true, "stream": stream,
		"return_spec_tokens_details": true}
	if stream {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	if chat {
		b["messages"] = []any{map[string]any{"role": "user", "content": prompt}}
	} else {
		b["prompt"] = prompt
	}
	return b
}

// specOf finds sglext.spec_tokens_details and the completion tokens in an
// answer, streamed or not, and says where the sglext chunk came.
func specOf(t *testing.T, evs []sseEvent) (d *specTokensDetails, completion int, where string) {
	t.Helper()
	for i, ev := range evs {
		if u, ok := ev.body["usage"].(map[string]any); ok {
			completion = int(u["completion_tokens"].(float64))
		}
		ext, ok := ev.body["sglext"].(map[string]any)
		if !ok {
			continue
		}
		raw, _ := json.Marshal(ext["spec_tokens_details"])
		d = &specTokensDetails{}
		if err := json.Unmarshal(raw, d); err != nil {
			t.Fatalf("spec_tokens_details %s: %v", raw, err)
		}
		switch ch, _ := ev.body["choices"].([]any); {
		case len(evs) == 1:
			where = "response"
		case len(ch) == 0 && i == len(evs)-3:
			where = "chunk before usage"
		default:
			where = fmt.Sprintf("event %d of %d: %s", i, len(evs), ev.raw)
		}
	}
	return d, completion, where
}

// TestSpecDetails: with return_spec_tokens_details a speculative server
// returns sglext.spec_tokens_details as SGLang does (on the response, or in
// a chunk of its own with empty choices after the finish and before the
// usage chunk), keeping its identities; without the flag, or without
// speculation, there is no sglext.
func TestSpecDetails(t *testing.T) {
	spec := startSim(t, nil, strings.Fields(simtest.Topk4)...)
	base := startSim(t, nil, strings.Fields(simtest.Baseline)...)
	spec.waitHealthy()
	base.waitHealthy()
	tests := []struct {
		name         string
		p            *simProc
		chat, stream bool
		ask          bool
		where        string // "" for no sglext
	}{
		{"chat, whole", spec, true, false, true, "response"},
		{"chat, streamed", spec, true, true, true, "chunk before usage"},
		{"completion, whole", spec, false, false, true, "response"},
		{"completion, streamed", spec, false, true, true, "chunk before usage"},
		{"not asked", spec, true, true, false, ""},
		{"no speculation", base, true, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := specBody(tt.chat, tt.stream, "Explain hash maps.", 57)
			if !tt.ask {
				delete(body, "return_spec_tokens_details")
			}
			path := "/v1/completions"
			if tt.chat {
				path = "/v1/chat/completions"
			}
			code, evs := post(t, tt.p.url(path), body)
			if code != 200 {
				t.Fatalf("status %d", code)
			}
			d, completion, where := specOf(t, evs)
			if where != tt.where {
				t.Fatalf("sglext at %q, want %q", where, tt.where)
			}
			if d == nil {
				return
			}
			if completion != 57 {
				t.Errorf("completion_tokens %d, want 57", completion)
			}
			if err := d.check(completion, 3, 8); err != nil {
				t.Error(err)
			}
		})
	}
	// /generate's meta_info carries the same fields.
	code, evs := post(t, spec.url("/generate"), map[string]any{"text": "Once upon",
		"sampling_params": map[string]any{"max_new_tokens": 40, "temperature": 0, "ignore_eos": true}})
	var g struct {
		Meta specTokensDetails `json:"meta_info"`
	}
	json.Unmarshal([]byte(evs[0].raw), &g)
	if err := g.Meta.check(40, 3, 8); code != 200 || err != nil {
		t.Errorf("/generate: %d %v: %s", code, err, evs[0].raw)
	}
}

// metric reads one unlabelled-by-us counter from /metrics.
func metric(t *testing.T, p *simProc, name string) float64 {
	t.Helper()
	resp, err := http.Get(p.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`(?m)^sglang:` + name + `\{[^}]*\} (\S+)$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("/metrics lacks sglang:%s", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestSpecCountersAgree: over a level of concurrent requests, the increase
// of generation_tokens_total over the increase of spec_verify_calls_total
// equals the requests' completion tokens over their spec_verify_ct (within
// 1%), and their accept length is within the model's range.
func TestSpecCountersAgree(t *testing.T) {
	p := startSim(t, nil, append(strings.Fields(simtest.Topk4), "--enable-metrics")...)
	p.waitHealthy()
	tokens0, verify0 := metric(t, p, "generation_tokens_total"), metric(t, p, "spec_verify_calls_total")
	const requests, concurrency = 48, 8
	var mu sync.Mutex
	var completion, verify int
	var wg sync.WaitGroup
	work := make(chan int)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				code, evs := post(t, p.url("/v1/chat/completions"), specBody(true, true, fmt.Sprintf("Question %d about caches.", i), 60+i))
				d, c, _ := specOf(t, evs)
				if code != 200 || d == nil {
					t.Errorf("request %d: status %d, details %v", i, code, d)
					continue
				}
				mu.Lock()
				completion += c
				verify += *d.VerifyCt
				mu.Unlock()
			}
		}()
	}
	for i := range requests {
		work <- i
	}
	close(work)
	wg.Wait()
	dTokens := metric(t, p, "generation_tokens_total") - tokens0
	dVerify := metric(t, p, "spec_verify_calls_total") - verify0
	perRequest := float64(completion) / float64(verify)
	counters := dTokens / dVerify
	if math.Abs(counters/perRequest-1) > 0.01 {
		t.Errorf("counters give accept length %.4f (%v/%v), the requests %.4f (%d/%d)", counters, dTokens, dVerify, perRequest, completion, verify)
	}
	if want := model.NewPerf(simtest.Config(t, cmdline.ParseArgs, "eagle3-topk4")).MeanAccept(); math.Abs(perRequest/want-1) > 0.1 {
		t.Errorf("accept length %.3f, the model's mean is %.3f", perRequest, want)
	}
}
