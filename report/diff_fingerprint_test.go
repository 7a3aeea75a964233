package report

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// TestDiffRequestsNotTheComparison: two runs of one campaign that took
// different request counts share the comparison fingerprint and are
// compared; other max_tokens is refused; a run written with the legacy
// fingerprint (which held the count) still diffs against itself.
func TestDiffRequestsNotTheComparison(t *testing.T) {
	const hash = "sha256:prompts"
	sweep := campaign.Sweep{Concurrency: []int{1, 2, 5}, MaxTokens: 200, Warmup: 5, IgnoreEOS: true,
		Endpoint: campaign.EndpointChat, Repeats: 1, Seed: 1}
	more, longer := sweep, sweep
	more.Requests, longer.MaxTokens = 60, 512
	dir := t.TempDir()
	old := writeRounds(t, filepath.Join(dir, "old"), 1, 1, campaign.Fingerprint(sweep, hash), 3)
	tests := []struct {
		name    string
		s       campaign.Sweep
		refused bool
	}{
		{"requests 60", more, false},
		{"max_tokens 512", longer, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			new := writeRounds(t, filepath.Join(dir, tt.name), uint64(i+2), 1, campaign.Fingerprint(tt.s, hash), 3)
			new.Manifest.Sweep.Requests, new.Manifest.Sweep.MaxTokens = tt.s.Requests, tt.s.MaxTokens
			_, err := rundiff.Compare(old, new, rundiff.Options{})
			var fe *rundiff.FingerprintError
			if errors.As(err, &fe) != tt.refused {
				t.Errorf("Diff: %v, refused want %v", err, tt.refused)
			}
			if !tt.refused && err != nil {
				t.Error(err)
			}
		})
	}
	legacy := writeRounds(t, filepath.Join(dir, "legacy"), 9, 1, campaign.LegacyFingerprint(sweep, hash), 3)
	if _, err := rundiff.Compare(legacy, legacy, rundiff.Options{}); err != nil {
		t.Errorf("a legacy run against itself: %v", err)
	}
}
