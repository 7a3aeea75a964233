package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// printTrace writes the trace a sweep replays: its file and hash, its rows,
// span and prefixes, the prefix-cache hit rate it implies, and how long
// the replay takes at each speed.
func printTrace(w io.Writer, c *campaign.Campaign) {
	t := c.Trace
	st := t.Stats()
	name := c.Sweep.Trace
	if rel, err := filepath.Rel(filepath.Dir(absOr(c.File)), name); err == nil {
		name = rel
	}
	fmt.Fprintf(w, "          trace %s (%s)\n", name, t.Hash)
	if t.Hashed() {
		fmt.Fprintf(w, "          %s over %s; %d input and %d output tokens; %d distinct prefixes of %d-token blocks; the trace implies a prefix-cache hit rate of %.1f%%\n",
			plural(st.Rows, "row"), fmtSpan(t.Duration()), st.InputTokens, st.OutputTokens, st.Prefixes, t.BlockSize, 100*st.HitRate)
	} else {
		fmt.Fprintf(w, "          %s over %s (prompts as written); %d output tokens asked\n", plural(st.Rows, "row"), fmtSpan(t.Duration()), st.OutputTokens)
	}
	at := make([]string, len(c.Sweep.Speeds))
	for i, v := range c.Sweep.Speeds {
		at[i] = fmt.Sprintf("%s at %s", fmtSpan(time.Duration(float64(t.Duration())/v)), measure.LevelLabel(measure.SpeedLevel(v)))
	}
	fmt.Fprintf(w, "          the replay sends for %s\n", strings.Join(at, ", "))
}

func joinSpeeds(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = measure.LevelLabel(measure.SpeedLevel(x))
	}
	return strings.Join(s, ", ")
}

// fmtSpan is a duration to the millisecond, as a trace's timestamps are.
func fmtSpan(d time.Duration) string { return fmtDur(d.Round(time.Millisecond)) }

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
