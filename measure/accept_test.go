package measure

import "testing"

// TestDraftAcceptLength: per-response draft counts (llama.cpp's
// timings.draft_n and draft_n_accepted in the final chunk,
// tools/server/README.md) summed over requests.
func TestDraftAcceptLength(t *testing.T) {
	tests := []struct {
		tokens, drafted, accepted int
		want                      float64
		ok                        bool
	}{
		{200, 160, 100, 2, true}, // 100 steps for 200 tokens
		{16, 16, 14, 8, true},    // 2 steps
		{200, 0, 0, 0, false},    // no speculation
		{10, 10, 10, 0, false},   // impossible: every step yields a token of its own
		{10, 10, -1, 0, false},
	}
	for _, tt := range tests {
		got, ok := DraftAcceptLength(tt.tokens, tt.drafted, tt.accepted)
		if ok != tt.ok || got != tt.want {
			t.Errorf("DraftAcceptLength(%d, %d, %d) = %v, %v; want %v, %v", tt.tokens, tt.drafted, tt.accepted, got, ok, tt.want, tt.ok)
		}
	}
}
