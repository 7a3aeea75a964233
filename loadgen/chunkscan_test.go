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
		`{"choices":[{"text":" completion","index":0,"logprobs":null,"finish_reason":"length"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":200,"total_tokens":212,"details":{"a":[1,2.5e-3,true,false,null]}}}`,
		`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}},null]}`,
		`{"error":{"message":"out of memory","type":"InternalError","code":500}}`,
		`{"CHOICES":[{"Delta":{"Content":"case"}}]}`,
		` null `, `{}`, `{"choices":null,"usage":null,"error":null}`,
		"{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
		// Errors, in both.
		`{`, `{"choices":[}`, `{"choices":5}`, `{"usage":{"completion_tokens":1.5}}`,
		`{"usage":{"completion_tokens":"3"}}`, `{"a":01}`, `{"a":tru}`, `{} x`, `[]`, `"s"`,
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

// FuzzChunkDecoders checks the hand-written decoder against encoding/json
// on arbitrary input: the same error or success, the same fields.
func FuzzChunkDecoders(f *testing.F) {
	for _, s := range []string{chatChunk, `{"choices":[{"delta":{"content":"\u00e9\ud83d\ude00"}}],"usage":{"completion_tokens":3}}`,
		`{"error":{"message":"x"}}`, `{"choices":[{"text":"t","finish_reason":"stop"}]}`, `null`, `{"a":[1,{"b":-2.5E+3}]}`} {
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
