package verdicttest

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// ServerScrapes is how many scrapes the server timeline of a launch with
// Scenario.Server has: a few hundred per level of a small sweep, as a sweep
// at one scrape a second gets over a level of minutes.
const ServerScrapes = 2000

// speculate sets each record's verify steps: the model's speculative step
// yields one content chunk per request, so a request's chunks are its
// target steps.
func speculate(recs []measure.Record) []measure.Record {
	out := slices.Clone(recs)
	for i := range out {
		if out[i].OK() {
			out[i].VerifySteps = new(out[i].Chunks)
		}
	}
	return out
}

// serverTimeline writes what an SGLang server's /metrics would have said
// through the launch, from its records, into dir's metrics/timeline.jsonl:
// requests running (in flight), queued (none), KV use (running over
// maxRunning), and the generated tokens and verify steps as counters that
// grow with each request's tokens spread over its stream. It returns each
// level's summaries over its repeats' steady windows, as the sweep writes
// them into levels.json.
func serverTimeline(dir string, recs []measure.Record, maxRunning int) ([]measure.LevelSummary, error) {
	w, ok := measure.WallWindow(recs)
	if !ok {
		return nil, nil
	}
	m := engine.Lookup("sglang").Server
	gauge := func(name string, v float64) timeline.Point {
		return timeline.Point{Series: timeline.Series{Name: name, Type: "gauge"}, Value: v}
	}
	counter := func(name string, v float64) timeline.Point {
		return timeline.Point{Series: timeline.Series{Name: name, Type: "counter"}, Value: v}
	}
	var buf bytes.Buffer
	tw := timeline.NewWriter(&buf)
	var tl timeline.Timeline
	step := max((w.End-w.Start)/ServerScrapes, 1)
	for t := w.Start; t <= w.End+step; t += step {
		var running, tokens, steps float64
		for _, r := range recs {
			if r.SendNs > t {
				continue
			}
			if r.EndNs > t {
				running++
			}
			share := 1.0
			if r.EndNs > r.FirstNs && t < r.EndNs {
				share = max(0, float64(t-r.FirstNs)/float64(r.EndNs-r.FirstNs))
			}
			tokens += share * float64(r.Tokens)
			steps += share * float64(r.Chunks)
		}
		pts := []timeline.Point{
			gauge(m.Running[0], running), gauge(m.Queued[0], 0), gauge(m.KVUsage[0], running/float64(maxRunning)),
			counter(m.GenerationTokens[0], tokens), counter(m.Accept[0].Den, steps),
		}
		tl.Add(t, pts)
		if err := tw.Write(t, pts); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, results.MetricsDir, timeline.File), buf.Bytes()); err != nil {
		return nil, err
	}
	type key struct {
		level  measure.Level
		repeat int
	}
	byRep := map[key][]measure.Record{}
	for _, r := range recs {
		if !r.Warmup {
			byRep[key{r.Level, r.Repeat}] = append(byRep[key{r.Level, r.Repeat}], r)
		}
	}
	var out []measure.LevelSummary
	for _, k := range slices.SortedFunc(maps.Keys(byRep), func(a, b key) int {
		if c := a.level.Compare(b.level); c != 0 {
			return c
		}
		return a.repeat - b.repeat
	}) {
		start, end, ok := measure.SteadyWindow(k.level, byRep[k])
		if !ok {
			continue
		}
		out = append(out, measure.LevelSummary{Level: k.level, Repeat: k.repeat, SteadyStartNs: start, SteadyEndNs: end,
			Server: timeline.Summarize(&tl, m, start, end)})
	}
	return out, nil
}
