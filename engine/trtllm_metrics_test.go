package engine

import (
	"strings"
	"testing"
)

// TestParseIterationStats: one /metrics answer's iterations are summed,
// objects and strings alike; an iteration without drafts counts only as an
// iteration; a malformed element is named and the rest still counted; an
// answer that is not a JSON array is refused.
func TestParseIterationStats(t *testing.T) {
	body := `[
	 {"iter": 1, "iterLatencyMS": 12.0},
	 {"iter": 2, "specDecodingStats": {"numDraftTokens": 8, "numAcceptedTokens": 5, "numRequestsWithDraftTokens": 2, "acceptanceLength": 3.5}},
	 "{\"iter\": 3, \"specDecodingStats\": {\"numDraftTokens\": 4, \"numAcceptedTokens\": 1, \"numRequestsWithDraftTokens\": 1, \"acceptanceLength\": 2.0}}",
	 {"iter": 4, "specDecodingStats": {"numDraftTokens": 0, "numAcceptedTokens": 0, "numRequestsWithDraftTokens": 0}}
	]`
	got, err := parseIterationStats([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{trtllmIterations: 4, trtllmSpecIterations: 2, trtllmSpecDraftTokens: 12, trtllmSpecAccepted: 6, trtllmSpecRequests: 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	al, src := trtllmAccept(Scrapes{Before: map[string]float64{}, After: got})
	if src != SourceTRTLLMIterationStats || al != 3 {
		t.Errorf("accept length %v from %q, want 3 (1 + 6/3)", al, src)
	}

	got, err = parseIterationStats([]byte(`[{"iter": 1, "specDecodingStats": {"numDraftTokens": 4, "numAcceptedTokens": 2, "numRequestsWithDraftTokens": 1}}, {"iter": "x", "specDecodingStats": 7}]`))
	if err == nil || !strings.Contains(err.Error(), "iteration 2 of 2") {
		t.Errorf("malformed element: error %v, want one naming iteration 2 of 2", err)
	}
	if got[trtllmSpecAccepted] != 2 {
		t.Errorf("the well-formed iteration was not kept: %v", got)
	}
	if _, err := parseIterationStats([]byte("# HELP x\nx 1\n")); err == nil || !strings.Contains(err.Error(), "JSON array") {
		t.Errorf("Prometheus text: error %v, want one saying a JSON array was expected", err)
	}
}
