package results

import (
	"strings"
	"testing"
)

func TestDecodeRecords(t *testing.T) {
	const good = `{"level":1,"seq":0,"send_ns":1,"end_ns":2,"tokens":24,"status":200}`
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"empty", "", 0, ""},
		{"one", good + "\n", 1, ""},
		{"no final newline", good, 1, ""},
		{"blank lines", "\n" + good + "\n\n" + good + "\n", 2, ""},
		{"torn last line dropped", good + "\n" + `{"level":1,"se`, 1, ""},
		{"bad complete last line", good + "\n1\n", 0, "t.jsonl:2: bad record"},
		{"bad middle line", good + "\n{oops}\n" + good + "\n", 0, "t.jsonl:2: bad record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := DecodeRecords(strings.NewReader(tt.in), "t.jsonl")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tt.want {
				t.Fatalf("%d records, want %d", len(recs), tt.want)
			}
		})
	}
}
