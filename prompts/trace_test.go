package prompts

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// mooncake is the head of Mooncake's conversation_trace.jsonl in its own
// shape: rows that share the first block, and one that repeats a prefix.
const mooncake = `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}
{"timestamp": 0, "input_length": 2290, "output_length": 316, "hash_ids": [0, 42, 43, 44, 45]}
{"timestamp": 3000, "input_length": 915, "output_length": 355, "hash_ids": [0, 462]}
{"timestamp": 5999, "input_length": 1000, "output_length": 26, "hash_ids": [0, 462]}
`

func TestParseTrace(t *testing.T) {
	tr, err := ParseTrace("t.jsonl", []byte(mooncake), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rows) != 4 || tr.BlockSize != DefaultBlockSize || !tr.Hashed() {
		t.Fatalf("rows %d, block %d, hashed %t", len(tr.Rows), tr.BlockSize, tr.Hashed())
	}
	if tr.Duration() != 5999*time.Millisecond {
		t.Errorf("duration %s, want 5.999s", tr.Duration())
	}
	if at := tr.At(2); at[3] != 2999500*time.Microsecond {
		t.Errorf("at speed 2 the last row is due at %s, want 2.9995s", at[3])
	}
	for i := range tr.Rows {
		if got := len(tr.RowTokens(i)); got != tr.Rows[i].Input {
			t.Errorf("row %d: %d tokens, want its input_length %d", i, got, tr.Rows[i].Input)
		}
	}
	again, _ := ParseTrace("elsewhere.jsonl", []byte(strings.ReplaceAll(mooncake, ", ", ",")), 0)
	if again.Hash != tr.Hash {
		t.Error("the same rows written otherwise hash differently")
	}
	other, _ := ParseTrace("t.jsonl", []byte(mooncake), 1024)
	if other != nil && other.Hash == tr.Hash {
		t.Error("another block size, the same hash")
	}
}

func TestParseTracePlain(t *testing.T) {
	tr, err := ParseTrace("p.jsonl", []byte(`{"timestamp": 10, "prompt": "hello there", "max_tokens": 5}
{"timestamp": 12.5, "prompt": "again"}
`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Hashed() || tr.Rows[0].At != 0 || tr.Rows[1].At != 2500*time.Microsecond || tr.Rows[0].Output != 5 || tr.Rows[1].Output != 0 {
		t.Errorf("%+v", tr.Rows)
	}
	if s := tr.Stats(); s.Prefixes != 0 || s.HitRate != 0 {
		t.Errorf("plain stats %+v", s)
	}
}

func TestParseTraceMalformed(t *testing.T) {
	for _, tt := range []struct{ name, data, want string }{
		{"empty", "", "t.jsonl:1: no rows"},
		{"only comments", "# nothing\n\n", "t.jsonl:1: no rows"},
		{"bad JSON", `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [0]}` + "\n{\"timestamp\": 1,", "t.jsonl:2: "},
		{"decreasing", `{"timestamp": 5, "prompt": "a"}` + "\n" + `{"timestamp": 4, "prompt": "b"}`, "t.jsonl:2: timestamp 4 is before"},
		{"negative input", `{"timestamp": 0, "input_length": -3, "output_length": 1}`, "t.jsonl:1: input_length -3"},
		{"negative output", `{"timestamp": 0, "input_length": 3, "output_length": -1, "hash_ids": [0]}`, "t.jsonl:1: output_length -1"},
		{"negative timestamp", `{"timestamp": -1, "prompt": "a"}`, "t.jsonl:1: timestamp -1"},
		{"no timestamp", `{"prompt": "a"}`, "t.jsonl:1: timestamp missing"},
		{"unknown field", `{"timestamp": 0, "promt": "a"}`, `t.jsonl:1: json: unknown field "promt"`},
		{"blocks", `{"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [0, 1]}`, "t.jsonl:1: input_length 1025 is 3 blocks"},
		{"mixed", `{"timestamp": 0, "prompt": "a"}` + "\n" + `{"timestamp": 0, "input_length": 3, "output_length": 1, "hash_ids": [0]}`, "t.jsonl:2: a row of the other form"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace("t.jsonl", []byte(tt.data), 0)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want it to start %q", err, tt.want)
			}
		})
	}
}

// TestBlocksSameEverywhere: a hash's block is the same tokens in every row
// that names it and on every call, and another hash's differs.
func TestBlocksSameEverywhere(t *testing.T) {
	tr, err := ParseTrace("t.jsonl", []byte(mooncake), 0)
	if err != nil {
		t.Fatal(err)
	}
	block0 := BlockTokens(0, DefaultBlockSize)
	for i := range tr.Rows {
		if got := tr.RowTokens(i)[:DefaultBlockSize]; !slices.Equal(got, block0) {
			t.Errorf("row %d starts with other tokens than hash 0's block", i)
		}
	}
	r2, r3 := tr.RowTokens(2), tr.RowTokens(3)
	if !slices.Equal(r2, r3[:len(r2)]) {
		t.Error("rows 2 and 3 name the same hashes but row 2 is not a prefix of row 3")
	}
	if slices.Equal(BlockTokens(1, 64), BlockTokens(2, 64)) {
		t.Error("two hashes, one block")
	}
	for _, id := range block0 {
		if id < BlockTokenLow || id >= BlockTokenHigh {
			t.Fatalf("token id %d outside [%d, %d)", id, BlockTokenLow, BlockTokenHigh)
		}
	}
	words, _ := builtinWords()
	if a, b := tr.RowText(2, words), tr.RowText(3, words); !strings.HasPrefix(b, a[:len(a)/2]) {
		t.Error("as text, rows sharing hashes do not share a prefix")
	}
}

func TestTraceStats(t *testing.T) {
	tr, err := ParseTrace("t.jsonl", []byte(mooncake), 0)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Stats()
	// Prefixes: hashes 0..13, then 42..45 and 462 under 0: 14 + 4 + 1.
	// Hits: row 1 finds block 0 (512), row 2 block 0 (512), row 3 block 0
	// and the 403 tokens of block 462 row 2 sent: 512 + 403.
	wantHit := float64(512+512+512+403) / float64(6758+2290+915+1000)
	if s.Rows != 4 || s.Prefixes != 19 || s.InputTokens != 6758+2290+915+1000 || s.OutputTokens != 500+316+355+26 || s.HitRate != wantHit {
		t.Errorf("stats %+v, want 19 prefixes and hit rate %.4f", s, wantHit)
	}
}
