package notes

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// DefaultCacheGap is the difference in prefix-cache hit rate (percentage
// points) between a scenario and the baseline at one level beyond which the
// notes warn that caching, not the variant, may explain a difference.
const DefaultCacheGap = 5.0

// checkCache says, per scenario, whether the server's prefix cache was
// cleared before each level (as the sweep recorded in its level summaries)
// and, where the server reports usage.prompt_tokens_details.cached_tokens,
// the share of prompt tokens served from the cache at each level. Runs
// from before either was recorded get no note.
func checkCache(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	rates := map[string]map[measure.Level]float64{}
	for _, s := range v.Scenarios {
		var levels []measure.LevelSummary // every launch's, from its figures' attempt
		for i := range in.Summary.Scenarios {
			sr := &in.Summary.Scenarios[i]
			if sr.Name != s.Name {
				continue
			}
			if c := sr.Complete(); c != nil {
				sr = c
			}
			levels = append(levels, sr.Levels...)
		}
		notes = append(notes, resetNotes(s.Name, levels, cacheDoubted(v, s.Name))...)
		r := hitRates(in.Records(s.Name))
		if len(r) == 0 {
			continue
		}
		rates[s.Name] = r
		var parts []string
		for _, c := range slices.SortedFunc(maps.Keys(r), measure.Level.Compare) {
			parts = append(parts, fmt.Sprintf("%s %.1f%%", measure.LevelName(c), r[c]))
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckCache, Scenario: s.Name,
			Text: fmt.Sprintf("%s: prefix-cache hit rate (cached of prompt tokens) %s", s.Name, strings.Join(parts, ", "))})
	}
	base := rates[v.Baseline]
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || base == nil || rates[s.Name] == nil {
			continue
		}
		for _, c := range slices.SortedFunc(maps.Keys(rates[s.Name]), measure.Level.Compare) {
			b, ok := base[c]
			if d := rates[s.Name][c] - b; ok && math.Abs(d) > DefaultCacheGap {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckCache, Scenario: s.Name, Level: c,
					Text: fmt.Sprintf("%s %s: %.1f%% of prompt tokens came from the prefix cache against %.1f%% for %s: part of the difference may be caching",
						s.Name, measure.LevelName(c), rates[s.Name][c], b, v.Baseline)})
			}
		}
	}
	return notes
}

// hitRates maps a level to the percentage of prompt tokens served from the
// cache, over the measured successful requests that report it.
func hitRates(recs iter.Seq2[int, *measure.Record]) map[measure.Level]float64 {
	cached, prompt := map[measure.Level]int{}, map[measure.Level]int{}
	for _, r := range recs {
		if r.Warmup || !r.OK() || r.CachedTokens == nil || r.PromptTokens <= 0 {
			continue
		}
		cached[r.Level] += *r.CachedTokens
		prompt[r.Level] += r.PromptTokens
	}
	out := map[measure.Level]float64{}
	for c, p := range prompt {
		out[c] = 100 * float64(cached[c]) / float64(p)
	}
	return out
}

// cacheDoubted reports whether some comparison of the run was doubted for
// the named scenario's prefix cache (verdict.DoubtCache).
func cacheDoubted(v *verdict.Verdict, name string) bool {
	for _, row := range v.Rows {
		for _, c := range row.Cells {
			for _, d := range c.Doubts {
				if d.Kind == verdict.DoubtCache && d.Scenario == name {
					return true
				}
			}
		}
	}
	return false
}

// resetNotes reads the sweep's record of each level's cache reset. A cache
// left warm is a warning only where it made a comparison doubted (the
// other side's was cleared, or served a different share): left warm on
// every side alike it favours none, and the note says so.
func resetNotes(name string, levels []measure.LevelSummary, doubted bool) []verdict.Note {
	var calls []string
	var missed []measure.Level
	var why string
	unique, none := true, false
	for _, l := range levels {
		switch {
		case l.NoPrefixCache:
			none = true
		case l.CacheReset != "":
			if !slices.Contains(calls, l.CacheReset) {
				calls = append(calls, l.CacheReset)
			}
		case l.CacheResetNote != "":
			if !slices.Contains(missed, l.Level) {
				missed = append(missed, l.Level)
			}
			why = l.CacheResetNote
			unique = unique && l.UniquePrompts
		}
	}
	switch {
	case len(missed) > 0:
		sev := verdict.SeverityInfo
		var ls []string
		for _, c := range missed {
			ls = append(ls, measure.LevelName(c))
		}
		text := fmt.Sprintf("%s: the prefix cache was not cleared before %s: %s", name, strings.Join(ls, ", "), why)
		switch {
		case unique:
		case doubted:
			sev = verdict.SeverityWarn
			text += "; not decided where the other side's cache was treated otherwise: " + verdict.DoubtAdvice(verdict.DoubtCache)
		default:
			text += "; every side it is compared with ran the same prompts in the same order with its cache treated alike, so it favours none: a note, not a doubt"
		}
		return []verdict.Note{{Severity: sev, Check: verdict.CheckCache, Scenario: name, Text: text}}
	case none:
		return []verdict.Note{{Severity: verdict.SeverityInfo, Check: verdict.CheckCache, Scenario: name,
			Text: name + ": no prefix cache to clear (prefix_cache: none)"}}
	case len(calls) > 0:
		return []verdict.Note{{Severity: verdict.SeverityInfo, Check: verdict.CheckCache, Scenario: name,
			Text: fmt.Sprintf("%s: the prefix cache was cleared before every level (%s)", name, strings.Join(calls, "; "))}}
	}
	return nil
}
