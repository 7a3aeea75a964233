package loadgen

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeBoth decodes data with the hand-written decoder and with
// encoding/json (the reference, through chunk's JSON tags).
func decodeBoth(data []byte) (got, want chunk, errGot, errWant error) {
	errGot = parseChunk(data, &got)
	errWant = json.Unmarshal(data, &want)
	return
}

func TestChunkDecoderMatchesEncodingJSON(t *testing.T) {
	tests := []string{
		chatChunk,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t"}}]}`,
		`{"choices":[{"delta":{"content":"lone \ud800 half \udc00"}}]}`,
		`{"choices":[{"delta":{"reasoning_content":"think","content":null}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"think"},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[{"delta":{"reasoning":"a","reasoning_content":"a","content":null}}]}`,
		`{"choices":[{"text":" completion","index":0,"logprobs":null,"finish_reason":"length"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":200,"total_tokens":212,"details":{"a":[1,2.5e-3,true,false,null]}}}`,
		`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}},null]}`,
		`{"error":{"message":"out of memory","type":"InternalError","code":500}}`,
		`{"CHOICES":[{"Delta":{"Content":"case"}}]}`,
		` null `, `{}`, `{"choices":null,"usage":null,"error":null}`,
		sglextChunk, vllmMetricsChunk,
		`{"sglext":null,"metrics":null}`, `{"sglext":{"spec_tokens_details":null},"metrics":{"speculative_decoding":null}}`,
		`{"sglext":{"spec_tokens_details":{"spec_correct_drafts_histogram":null,"spec_verify_ct":0}}}`,
		`{"metrics":{"speculative_decoding":{"acceptance_histogram":[],"num_spec_steps":0}}}`,
		`{"metrics":{"speculative_decoding":{"acceptance_histogram":[1,2],"acceptance_histogram":[3]}}}`,
		"{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
		// Errors, in both.
		`{`, `{"choices":[}`, `{"choices":5}`, `{"usage":{"completion_tokens":1.5}}`,
		`{"usage":{"completion_tokens":"3"}}`, `{"a":01}`, `{"a":tru}`, `{} x`, `[]`, `"s"`,
		`{"metrics":{"speculative_decoding":{"acceptance_histogram":[1,2.5]}}}`, `{"sglext":{"spec_tokens_details":[{"spec_verify_ct":3}]}}`,
		`{"sglext":{"spec_tokens_details":{"spec_correct_drafts_histogram":[1,]}}}`, `{"metrics":{"speculative_decoding":{"acceptance_histogram":{}}}}`,
		`{"choices":[{"delta":{"content":"ctl ` + "\x01" + `"}}]}`, `{"a":"\x"}`, `{"a":1.}`, `{"a":-}`,
	}
	for _, in := range tests {
		got, want, errGot, errWant := decodeBoth([]byte(in))
		if (errGot == nil) != (errWant == nil) {
			t.Errorf("%s: error %v, encoding/json %v", in, errGot, errWant)
			continue
		}
		if errWant == nil && !reflect.DeepEqual(normal(got), normal(want)) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
}

// normal makes an empty choices slice and a nil one compare equal.
func normal(c chunk) chunk {
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	return c
}

// llamaCppFinalChunk is the last chunk of a llama-server /v1/completions
// stream with draft-model speculation, written from its documented shape
// (tools/server/README.md: usage with prompt_tokens_details.cached_tokens,
// and timings with draft_n and draft_n_accepted; PR #12603).
const llamaCppFinalChunk = `{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"created":1764550000,` +
	`"model":"qwen3-8b","system_fingerprint":"b6500-1f2e3d4c","object":"text_completion","id":"cmpl-x",` +
	`"usage":{"completion_tokens":128,"prompt_tokens":40,"total_tokens":168,"prompt_tokens_details":{"cached_tokens":32}},` +
	`"timings":{"cache_n":32,"prompt_n":8,"prompt_ms":41.2,"prompt_per_token_ms":5.15,"prompt_per_second":194.2,` +
	`"predicted_n":128,"predicted_ms":2100.5,"predicted_per_token_ms":16.4,"predicted_per_second":60.9,"draft_n":96,"draft_n_accepted":71}}`

// sglextChunk and vllmMetricsChunk are the chunks that carry SGLang's and
// vLLM's per-request speculative counts (testdata/README.md).
const (
	sglextChunk = `{"id":"8c1f","choices":[],"usage":null,"sglext":{"spec_tokens_details":{"spec_accept_rate":0.293,` +
		`"spec_accept_length":2.465,"spec_num_correct_drafts":63,"spec_num_proposed_drafts":215,"spec_verify_ct":43,` +
		`"spec_correct_drafts_histogram":[11,14,11,4,0,3]}}}`
	vllmMetricsChunk = `{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":54},"metrics":{"speculative_decoding":` +
		`{"mean_acceptance_length":1.23,"draft_acceptance_rate":0.0775,"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,` +
		`"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}}}`
)

// FuzzChunkDecoders checks the hand-written decoder against encoding/json
// on arbitrary input: the same error or success, the same fields.
func FuzzChunkDecoders(f *testing.F) {
	for _, s := range []string{chatChunk, `{"choices":[{"delta":{"content":"\u00e9\ud83d\ude00"}}],"usage":{"completion_tokens":3}}`,
		`{"error":{"message":"x"}}`, `{"choices":[{"text":"t","finish_reason":"stop"}]}`, `null`, `{"a":[1,{"b":-2.5E+3}]}`,
		llamaCppFinalChunk, `{"usage":{"prompt_tokens_details":null},"timings":{"draft_n":null}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":null}}}`, `{"timings":[]}`,
		sglextChunk, vllmMetricsChunk, `{"metrics":{"speculative_decoding":{"acceptance_histogram":[1,2.5]}}}`,
		`{"sglext":{"spec_tokens_details":[{"spec_verify_ct":3}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want, errGot, errWant := decodeBoth(data)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", data, errGot, errWant)
		}
		if errWant == nil && !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}
