package notes

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// cachedRecords are n measured requests at level c, each with prompt
// tokens 100 of which cached came from the cache (nil: not reported).
func cachedRecords(c, n int, cached *int) []measure.Record {
	var out []measure.Record
	for i := range n {
		out = append(out, measure.Record{Level: measure.ConcurrencyLevel(c), Seq: i, PromptTokens: 100, Tokens: 10, CachedTokens: cached})
	}
	return out
}

func TestCheckCache(t *testing.T) {
	zero, some := 0, 40
	// The verdict doubted b at C=8 for its cache (a's was cleared there).
	v := &verdict.Verdict{Baseline: "a", Scenarios: []verdict.Scenario{{Name: "a"}, {Name: "b"}},
		Rows: []verdict.Row{{Level: measure.ConcurrencyLevel(8), Cells: []verdict.Cell{{Scenario: "a"},
			{Scenario: "b", Comparison: verdict.Comparison{Outcome: verdict.OutcomeDoubted,
				Doubts: []verdict.Doubt{{Kind: verdict.DoubtCache, Scenario: "b"}}}}}}}}
	warm := measure.Record{Level: measure.ConcurrencyLevel(0), Warmup: true, PromptTokens: 100, CachedTokens: &some}
	in := records.Input{
		Summary: results.Summary{Scenarios: []results.ScenarioResult{
			{Name: "a", Status: results.StatusOK, Levels: []measure.LevelSummary{
				{Level: measure.ConcurrencyLevel(1), CacheReset: "POST /flush_cache"}, {Level: measure.ConcurrencyLevel(8), CacheReset: "POST /flush_cache"}}},
			{Name: "b", Status: results.StatusOK, Levels: []measure.LevelSummary{
				{Level: measure.ConcurrencyLevel(1), CacheReset: "POST /flush_cache"},
				{Level: measure.ConcurrencyLevel(8), CacheResetNote: "clearing the prefix cache failed: POST /flush_cache: status 400"}}},
		}},
		Launches: verdicttest.OneLaunchEach(map[string][]measure.Record{
			"a": append(append([]measure.Record{warm}, cachedRecords(1, 4, &zero)...), cachedRecords(8, 4, &zero)...),
			"b": append(cachedRecords(1, 4, &zero), cachedRecords(8, 4, &some)...),
		}),
	}
	var got []string
	for _, n := range checkCache(v, in) {
		got = append(got, n.Severity+" "+n.Text)
	}
	want := []string{
		"info a: the prefix cache was cleared before every level (POST /flush_cache)",
		"info a: prefix-cache hit rate (cached of prompt tokens) C=1 0.0%, C=8 0.0%",
		"warn b: the prefix cache was not cleared before C=8: clearing the prefix cache failed: POST /flush_cache: status 400; not decided where the other side's cache was treated otherwise: " + verdict.DoubtAdvice(verdict.DoubtCache),
		"info b: prefix-cache hit rate (cached of prompt tokens) C=1 0.0%, C=8 40.0%",
		"warn b C=8: 40.0% of prompt tokens came from the prefix cache against 0.0% for a: part of the difference may be caching",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckCacheAlike: a cache left warm on every side alike made no
// comparison doubted: the note informs, and says why it is no doubt; a
// server that keeps no prefix cache is said to have none to clear.
func TestCheckCacheAlike(t *testing.T) {
	// c, whose server keeps no cache, would be doubted against a or b in a
	// real verdict; this one is of the notes alone, and doubted nothing.
	v := &verdict.Verdict{Baseline: "a", Scenarios: []verdict.Scenario{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	warm := measure.LevelSummary{Level: measure.ConcurrencyLevel(1), CacheResetNote: "no prefix-cache reset: engine generic has no known reset"}
	in := records.Input{Summary: results.Summary{Scenarios: []results.ScenarioResult{
		{Name: "a", Status: results.StatusOK, Levels: []measure.LevelSummary{warm}},
		{Name: "b", Status: results.StatusOK, Levels: []measure.LevelSummary{warm}},
		{Name: "c", Status: results.StatusOK, Levels: []measure.LevelSummary{{Level: measure.ConcurrencyLevel(1), NoPrefixCache: true}}},
	}}}
	var got []string
	for _, n := range checkCache(v, in) {
		got = append(got, n.Severity+" "+n.Text)
	}
	want := []string{
		"info a: the prefix cache was not cleared before C=1: no prefix-cache reset: engine generic has no known reset; every side it is compared with ran the same prompts in the same order with its cache treated alike, so it favours none: a note, not a doubt",
		"info b: the prefix cache was not cleared before C=1: no prefix-cache reset: engine generic has no known reset; every side it is compared with ran the same prompts in the same order with its cache treated alike, so it favours none: a note, not a doubt",
		"info c: no prefix cache to clear (prefix_cache: none)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckCacheQuiet: a run from before resets and cached tokens were
// recorded gets no cache note; an engine without a reset under
// unique_prompts is only informed.
func TestCheckCacheQuiet(t *testing.T) {
	v := &verdict.Verdict{Baseline: "a", Scenarios: []verdict.Scenario{{Name: "a"}}}
	in := records.Input{Summary: results.Summary{Scenarios: []results.ScenarioResult{{Name: "a", Levels: []measure.LevelSummary{{Level: measure.ConcurrencyLevel(1)}}}}},
		Launches: verdicttest.OneLaunchEach(map[string][]measure.Record{"a": cachedRecords(1, 3, nil)})}
	if n := checkCache(v, in); len(n) != 0 {
		t.Errorf("notes for an old run: %+v", n)
	}
	in.Summary.Scenarios[0].Levels[0] = measure.LevelSummary{Level: measure.ConcurrencyLevel(1), UniquePrompts: true,
		CacheResetNote: "no prefix-cache reset: trtllm-serve has none"}
	n := checkCache(v, in)
	if len(n) != 1 || n[0].Severity != verdict.SeverityInfo || !strings.Contains(n[0].Text, "not cleared before C=1") {
		t.Errorf("notes: %+v", n)
	}
}
