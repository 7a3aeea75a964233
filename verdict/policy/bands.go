package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// Band is a run of consecutive levels at which one configuration is the one
// to serve.
type Band struct {
	Config string `json:"config"`
	// From and To are the band's first and last levels ("C=1").
	From string `json:"from"`
	To   string `json:"to"`
}

// CapacityLevel names the race's column of SLO capacity (package judge
// adds it under an objective): raced like a level, but not a load, so no
// band of the policy.
const CapacityLevel = "SLO capacity"

// Bands are the race's load bands, low load first: consecutive levels with
// the same selected configuration make one band. Levels without a selection
// are skipped, and so is the capacity.
func Bands(res *selection.Result) []Band {
	if res == nil {
		return nil
	}
	var bands []Band
	for _, l := range res.Levels {
		if l.Selected == "" || l.Level == CapacityLevel {
			continue
		}
		if n := len(bands); n > 0 && bands[n-1].Config == l.Selected {
			bands[n-1].To = l.Level
			continue
		}
		bands = append(bands, Band{Config: l.Selected, From: l.Level, To: l.Level})
	}
	return bands
}

// Fixed is the configurations a policy switches between, each once, in
// band order: what a race that checks it races it against.
func Fixed(bands []Band) []string {
	var out []string
	for _, b := range bands {
		if !slices.Contains(out, b.Config) {
			out = append(out, b.Config)
		}
	}
	return out
}

// Sentence is the policy in words: "Serve A up to C=1, B from C=4."
func Sentence(bands []Band) string {
	if len(bands) == 0 {
		return ""
	}
	var parts []string
	for i, b := range bands {
		switch {
		case len(bands) == 1:
			parts = append(parts, b.Config+" at every level")
		case i == 0:
			parts = append(parts, b.Config+" up to "+b.To)
		case i == len(bands)-1:
			parts = append(parts, b.Config+" from "+b.From)
		case b.From == b.To:
			parts = append(parts, b.Config+" at "+b.From)
		default:
			parts = append(parts, b.Config+" from "+b.From+" to "+b.To)
		}
	}
	return "Serve " + strings.Join(parts, ", ") + "."
}

// concurrency reads a level written "C=4"; false for any other level.
func concurrency(level string) (int, bool) {
	var c int
	if n, err := fmt.Sscanf(level, "C=%d", &c); n != 1 || err != nil || c < 1 || fmt.Sprintf("C=%d", c) != level {
		return 0, false
	}
	return c, true
}
