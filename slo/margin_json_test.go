package slo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestResultJSONInfiniteMargins: a level that missed its objective with
// nothing to show has a −Inf margin, which JSON cannot hold as a number; the
// result is written anyway and reads back the same.
func TestResultJSONInfiniteMargins(t *testing.T) {
	for _, tt := range []struct {
		name    string
		margins Margins
		margin  Margin
		want    string
	}{
		{"finite", Margins{TTFT: 0.25, MinSuccess: 0}, 0, `"margins":{"min_success":0,"ttft_p99":0.25},"margin":0`},
		{"saturated", Margins{TTFT: 0.1, "saturated": math.Inf(-1)}, Margin(math.Inf(-1)), `"margins":{"saturated":"-Inf","ttft_p99":0.1},"margin":"-Inf"`},
		{"no bound", Margins{}, Margin(math.Inf(1)), `"margins":{},"margin":"+Inf"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := Result{Requests: 3, Values: map[string]float64{}, Margins: tt.margins, Margin: tt.margin, Binding: TTFT}
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("%s\nwant it to hold %s", b, tt.want)
			}
			var out Result
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if out.Margin != in.Margin || len(out.Margins) != len(in.Margins) {
				t.Fatalf("read back %+v, wrote %+v", out, in)
			}
			for k, v := range in.Margins {
				if out.Margins[k] != v {
					t.Errorf("margin %s: read back %v, wrote %v", k, out.Margins[k], v)
				}
			}
		})
	}
	var m Margin
	if err := json.Unmarshal([]byte(`"Inf"`), &m); err == nil {
		t.Errorf(`"Inf" read as a margin without error`)
	}
}
