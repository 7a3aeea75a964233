package measure_test

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// recordLine is a successful llama.cpp request as requests.jsonl holds it,
// with the draft fields to test appended.
func recordLine(draft string) string {
	return `{"level":1,"repeat":0,"seq":0,"prompt":3,"prompt_set":"sha256:ab","send_ns":1000,"first_ns":2000,` +
		`"end_ns":9000,"dispatch_lag_ns":0,"prompt_tokens":40,"tokens":16,"chunks":16,"status":200` + draft + `}`
}

// TestRecordKeepsSentZeros: a record read and written again is the same
// record: a draft count the server sent as 0 is still there, and one it did
// not send is still absent. Every table is rebuilt from these lines, so
// "accepted none" must not turn into "not reported" on the way.
func TestRecordKeepsSentZeros(t *testing.T) {
	for _, tt := range []struct {
		name, draft string
		keys        []string // the draft keys the line must still have
	}{
		{"random draft: none accepted", `,"draft_n":12,"draft_n_accepted":0`, []string{"draft_n", "draft_n_accepted"}},
		{"nothing drafted, said so", `,"draft_n":0,"draft_n_accepted":0`, []string{"draft_n", "draft_n_accepted"}},
		{"some accepted", `,"draft_n":12,"draft_n_accepted":7`, []string{"draft_n", "draft_n_accepted"}},
		{"not reported", ``, nil},
		{"no cached tokens, said so", `,"cached_tokens":0`, []string{"cached_tokens"}},
		{"one token, no verify step, said so", `,"draft_n":0,"draft_n_accepted":0,"verify_steps":0`,
			[]string{"draft_n", "draft_n_accepted", "verify_steps"}},
		{"verify steps and histogram", `,"draft_n":21,"draft_n_accepted":8,"verify_steps":7,"accept_histogram":[2,2,1,2]`,
			[]string{"draft_n", "draft_n_accepted", "verify_steps", "accept_histogram"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := recordLine(tt.draft)
			var r measure.Record
			if err := json.Unmarshal([]byte(in), &r); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var a, b map[string]any
			if err := json.Unmarshal([]byte(in), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("read and written again:\n got %s\nwant %s", out, in)
			}
			for _, k := range []string{"draft_n", "draft_n_accepted", "cached_tokens", "verify_steps", "accept_histogram"} {
				if _, ok := b[k]; ok != slices.Contains(tt.keys, k) {
					t.Errorf("%s present %v in %s", k, ok, out)
				}
			}
		})
	}
}

// TestRecordDraft: Record.Draft tells "accepted none" from "not reported",
// reads a record written before zeros were kept (draft_n alone) as none
// accepted, and none accepted where drafting happened is accept length 1.00.
func TestRecordDraft(t *testing.T) {
	for _, tt := range []struct {
		name, draft       string
		drafted, accepted int
		ok                bool
		accept            float64 // 0: no accept length
	}{
		{"random draft: none accepted", `,"draft_n":12,"draft_n_accepted":0`, 12, 0, true, 1},
		{"an older record: draft_n alone", `,"draft_n":12`, 12, 0, true, 1},
		{"half accepted", `,"draft_n":12,"draft_n_accepted":8`, 12, 8, true, 2},
		{"nothing drafted, said so", `,"draft_n":0,"draft_n_accepted":0`, 0, 0, true, 0},
		{"not reported", ``, 0, 0, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r measure.Record
			if err := json.Unmarshal([]byte(recordLine(tt.draft)), &r); err != nil {
				t.Fatal(err)
			}
			d, a, ok := r.Draft()
			if d != tt.drafted || a != tt.accepted || ok != tt.ok {
				t.Errorf("Draft() = %d, %d, %v; want %d, %d, %v", d, a, ok, tt.drafted, tt.accepted, tt.ok)
			}
			al, alOK := measure.DraftAcceptLength(r.Tokens, d, a)
			if alOK != (tt.accept != 0) || math.Abs(al-tt.accept) > 1e-12 {
				t.Errorf("accept length %v (%v), want %v", al, alOK, tt.accept)
			}
		})
	}
}

// TestCategoriesKeepNoneAccepted: a category whose drafts were all rejected
// says so in levels.json (draft_n_accepted 0, accept length 1.00); one whose
// server reported no drafting has neither.
func TestCategoriesKeepNoneAccepted(t *testing.T) {
	var recs []measure.Record
	for i, line := range []string{
		`{"level":1,"seq":0,"category":"code","send_ns":0,"first_ns":10,"end_ns":100,"tokens":16,"draft_n":12,"draft_n_accepted":0}`,
		`{"level":1,"seq":1,"category":"code","send_ns":100,"first_ns":110,"end_ns":200,"tokens":16,"draft_n":12}`,
		`{"level":1,"seq":2,"category":"chat","send_ns":200,"first_ns":210,"end_ns":300,"tokens":16}`,
	} {
		var r measure.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		recs = append(recs, r)
	}
	cats := measure.Categories(measure.ConcurrencyLevel(1), recs)
	b, err := json.Marshal(cats)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["category"] != "chat" || got[1]["category"] != "code" {
		t.Fatalf("categories %s", b)
	}
	chat, code := got[0], got[1]
	if code["draft_n"] != 24.0 || code["draft_n_accepted"] != 0.0 || code["accept_length"] != 1.0 {
		t.Errorf("code: draft_n %v, draft_n_accepted %v, accept length %v; want 24, 0, 1", code["draft_n"], code["draft_n_accepted"], code["accept_length"])
	}
	for _, k := range []string{"draft_n", "draft_n_accepted", "accept_length"} {
		if v, ok := chat[k]; ok {
			t.Errorf("chat drafted nothing, yet has %s %v", k, v)
		}
	}
}
