package measure

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzITLRoundTrip: any list of gaps comes back exactly through its
// encoding and through a record's JSON, and any string DecodeGaps accepts
// encodes back to itself, so a string has one meaning.
func FuzzITLRoundTrip(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte{0x10, 0x27, 0, 0, 0, 0, 0, 0, 0x11, 0x27, 0, 0, 0, 0, 0, 0}, "kKQB")
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x80}, "gAA")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		var g Gaps
		for i := 0; i+8 <= len(raw); i += 8 {
			var x int64
			for j := range 8 {
				x |= int64(raw[i+j]) << (8 * j)
			}
			g = append(g, x)
		}
		back, err := DecodeGaps(EncodeGaps(g))
		if err != nil || !slices.Equal(back, []int64(g)) {
			t.Fatalf("DecodeGaps(EncodeGaps(%v)) = %v, %v", g, back, err)
		}
		line, err := json.Marshal(Record{ITL: g})
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || !slices.Equal(r.ITL, g) {
			t.Fatalf("record %s read back as %v, %v", line, r.ITL, err)
		}
		if d, err := DecodeGaps(s); err == nil && EncodeGaps(d) != s {
			t.Fatalf("DecodeGaps(%q) = %v, which encodes as %q", s, d, EncodeGaps(d))
		}
	})
}

// TestDecodeGapsRefuses: what EncodeGaps cannot have written is an error,
// and reading a record with it fails rather than inventing gaps.
func TestDecodeGapsRefuses(t *testing.T) {
	for _, tc := range []struct{ name, s string }{
		{"not base64", "a+b/"},
		{"padding", "AA=="},
		{"truncated number", "gA"},
		{"overlong zero", "gAA"},
		{"trailing bits", "AB"},
		{"line break", "AA\nAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d, err := DecodeGaps(tc.s); err == nil {
				t.Errorf("DecodeGaps(%q) = %v, want an error", tc.s, d)
			}
			var r Record
			if err := json.Unmarshal([]byte(`{"itl":"`+tc.s+`"}`), &r); err == nil {
				t.Errorf("a record with itl %q read without error", tc.s)
			}
		})
	}
}

// TestRecordWithoutGaps: a record written before the gaps were kept reads
// as before, with none; a record with none writes no itl key.
func TestRecordWithoutGaps(t *testing.T) {
	old := `{"level":4,"repeat":0,"seq":1,"prompt":2,"prompt_set":"sha256:aa","send_ns":1000,"first_ns":2000,"end_ns":9000,"dispatch_lag_ns":0,"prompt_tokens":10,"tokens":8,"chunks":8,"max_itl_ns":1200,"status":200}`
	var r Record
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if r.ITL != nil || r.MaxITLNs != 1200 || r.Tokens != 8 {
		t.Errorf("old record read as %+v", r)
	}
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(line), `"itl"`) {
		t.Errorf("a record without gaps writes %s", line)
	}
	if err := json.Unmarshal([]byte(`{"itl":null}`), &r); err != nil || r.ITL != nil {
		t.Errorf("itl null read as %v, %v", r.ITL, err)
	}
}

// TestGapsSeconds: the unit is the microsecond.
func TestGapsSeconds(t *testing.T) {
	got := Gaps{0, 1, 25_000}.Seconds()
	want := []float64{0, 1e-6, 0.025}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("Seconds()[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}
