package results

import "testing"

// TestCompleteStaysOnTheRoundsHost: an earlier complete attempt stands in
// for a failed rerun only when both ran on the same host (or either does not
// say), since a fleet's round counts launches of one host only.
func TestCompleteStaysOnTheRoundsHost(t *testing.T) {
	ok := func(host string) ScenarioResult {
		return ScenarioResult{Name: "b", Status: StatusOK, Attempt: 1, HostName: host}
	}
	for _, tc := range []struct {
		name        string
		newest, old string // hosts
		want        int    // attempt of Complete(), 0 for none
	}{
		{"same host", "gpu-a", "gpu-a", 1},
		{"moved to another host", "gpu-b", "gpu-a", 0},
		{"older attempt without a host", "gpu-b", "", 1},
		{"single host without names", "", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ScenarioResult{Name: "b", Status: StatusFailed, Attempt: 2, HostName: tc.newest,
				History: []ScenarioResult{ok(tc.old)}}
			got := 0
			if c := r.Complete(); c != nil {
				got = c.Attempt
			}
			if got != tc.want {
				t.Errorf("complete attempt %d, want %d", got, tc.want)
			}
		})
	}
}
