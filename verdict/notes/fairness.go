// Package notes says what in a run's measurement to doubt or to trust,
// once the verdict is decided and explained: a fingerprint or prompt set
// that differs, failed launches, requests, token counts and greedy outputs
// that disagree, concurrency not reached, pacing, too few samples, a cache
// not cleared, the rounds behind each comparison, the fleet's hosts, energy
// not measured, the server's counts against the client's, inter-token
// gaps, and the host's noise profile. Each check returns notes, and one
// that passed says so; none changes an outcome (the rule's own doubts live
// in package verdict, doubt.go).
package notes

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
)

// Of runs every check over a decided and explained verdict, most severe
// first; none passes silently: a check that passed says so in an info
// note. energyGaps are, per scenario, the levels without an energy figure
// and why (explain.Levels).
func Of(v *verdict.Verdict, in records.Input, energyGaps map[string][]string) []verdict.Note {
	var notes []verdict.Note
	notes = append(notes, checkFingerprint(v, in)...)
	notes = append(notes, checkScenarios(v)...)
	notes = append(notes, checkRequests(v)...)
	notes = append(notes, checkConnections(v, in)...)
	notes = append(notes, checkTokens(v, in)...)
	notes = append(notes, checkGreedy(v, in)...)
	notes = append(notes, checkConcurrency(v)...)
	notes = append(notes, checkSamples(v)...)
	notes = append(notes, checkCache(v, in)...)
	notes = append(notes, checkRounds(v)...)
	notes = append(notes, checkHosts(v)...)
	notes = append(notes, checkInconclusive(v)...)
	notes = append(notes, checkEnergy(v, in, energyGaps)...)
	notes = append(notes, checkServer(v, in)...)
	notes = append(notes, checkFigures(v, in)...)
	notes = append(notes, checkKVTransfer(v, in)...)
	notes = append(notes, checkITL(v, in)...)
	notes = append(notes, checkHost(v)...)
	notes = append(notes, priorNote(v)...)
	rank := map[string]int{verdict.SeverityRed: 0, verdict.SeverityWarn: 1, verdict.SeverityInfo: 2}
	slices.SortStableFunc(notes, func(a, b verdict.Note) int { return cmp.Compare(rank[a.Severity], rank[b.Severity]) })
	return notes
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

func checkFingerprint(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		if s.Fingerprint != "" && v.Fingerprint != "" && s.Fingerprint != v.Fingerprint {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityRed, Check: verdict.CheckFingerprint, Scenario: s.Name,
				Text: fmt.Sprintf("%s ran with sweep fingerprint %s, the run's is %s: not the same load, not comparable",
					s.Name, short(s.Fingerprint), short(v.Fingerprint))})
		}
	}
	want := in.Manifest.Sweep.PromptSet
	sets := map[string]map[string]bool{} // scenario → prompt-set hashes seen
	for _, s := range v.Scenarios {
		for _, r := range in.Records(s.Name) {
			if sets[s.Name] == nil {
				sets[s.Name] = map[string]bool{}
			}
			sets[s.Name][r.PromptSet] = true
		}
	}
	ref := want
	for _, s := range v.Scenarios {
		for ps := range sets[s.Name] {
			if ref == "" {
				ref = ps
			}
			if ps != ref {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityRed, Check: verdict.CheckFingerprint, Scenario: s.Name,
					Text: fmt.Sprintf("%s sent prompt set %s, expected %s", s.Name, short(ps), short(ref))})
			}
		}
	}
	if len(notes) == 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckFingerprint,
			Text: fmt.Sprintf("same sweep fingerprint (%s) and prompt set in every scenario", short(v.Fingerprint))})
	}
	return notes
}

func checkScenarios(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		for _, line := range s.Superseded() {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckScenario, Scenario: s.Name, Text: line})
		}
		for _, l := range s.FailedLaunches() {
			text := fmt.Sprintf("%s round %d failed", s.Name, l.Round)
			if l.FailedPhase != "" {
				text += " in phase " + l.FailedPhase
			}
			if l.Reason != "" {
				text += ": " + verdict.FirstLine(l.Reason)
			}
			notes = append(notes, verdict.Note{Severity: verdict.SeverityRed, Check: verdict.CheckScenario, Scenario: s.Name,
				Text: text + "; the verdict uses its other rounds, and a configuration that fails one launch in several is not ready"})
		}
		switch {
		case s.Failed():
			text := fmt.Sprintf("%s failed", s.Name)
			if s.FailedPhase != "" {
				text += " in phase " + s.FailedPhase
			}
			if s.Reason != "" {
				text += ": " + verdict.FirstLine(s.Reason)
			}
			notes = append(notes, verdict.Note{Severity: verdict.SeverityRed, Check: verdict.CheckScenario, Scenario: s.Name,
				Text: text + "; it has no measurements"})
		case len(s.Levels) == 0:
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckScenario, Scenario: s.Name,
				Text: fmt.Sprintf("%s has no measured requests (status %s)", s.Name, s.Status)})
		}
	}
	return notes
}

func checkRequests(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	total := 0
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			total += l.Requests
			if l.Failed == 0 {
				continue
			}
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckRequests, Scenario: s.Name, Level: l.Level,
				Text: fmt.Sprintf("%s %s: %d of %d requests failed (%s); throughput counts successful requests only",
					s.Name, measure.LevelName(l.Level), l.Failed, l.Requests, classes(l.FailedByClass))})
		}
	}
	if len(notes) == 0 && total > 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckRequests,
			Text: fmt.Sprintf("all %d measured requests succeeded", total)})
	}
	return notes
}

func classes(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func checkTokens(v *verdict.Verdict, in records.Input) []verdict.Note {
	var notes []verdict.Note
	estimated, own := false, false
	for _, s := range v.Scenarios {
		short, n := 0, 0
		for _, r := range in.Records(s.Name) {
			if r.Warmup || !r.OK() {
				continue
			}
			n++
			estimated = estimated || r.TokensEstimated
			// A prompt that asks for its own length (a trace row, a
			// synthetic or recorded output length) is held to it.
			want := cmp.Or(r.MaxTokens, v.MaxTokens)
			own = own || r.MaxTokens > 0
			if v.IgnoreEOS && want > 0 && r.Tokens != want {
				short++
			}
		}
		if short > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckTokens, Scenario: s.Name,
				Text: fmt.Sprintf("%s: %d of %d requests did not produce exactly %s although ignore_eos is on",
					s.Name, short, n, maxTokensWords(own, v.MaxTokens))})
		}
		if estimated {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckTokens, Scenario: s.Name,
				Text: fmt.Sprintf("%s: the server sent no usage; token counts are estimated from the text", s.Name)})
			estimated = false
		}
	}
	if len(notes) == 0 && v.IgnoreEOS && (v.MaxTokens > 0 || own) {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckTokens,
			Text: fmt.Sprintf("every successful request produced %s (ignore_eos)", maxTokensWords(own, v.MaxTokens))})
	}
	return notes
}

// maxTokensWords names what requests asked for: the sweep's max_tokens, or
// each its own where prompts carry their lengths.
func maxTokensWords(own bool, maxTokens int) string {
	if own {
		return "the max_tokens each asked for"
	}
	return fmt.Sprintf("max_tokens=%d", maxTokens)
}

// Defaults of the greedy-output check (docs/METHOD.md, Fairness checks).
const (
	// DefaultGreedyAlpha is the one-sided level below which a variant's
	// share of prompts with changed outputs is called higher than the
	// baseline's share with outputs of its own that differ. Stricter than
	// DefaultAlpha: the claim is a bug, in red, which fails the report.
	DefaultGreedyAlpha = 0.01
	// DefaultGreedyMargin is how far above the baseline's own share (a
	// fraction of the prompts) the variant's must be as well: correct
	// speculative decoding verifies with other kernels than plain decoding
	// and may flip a near-tie of the top two tokens a little more often
	// than the baseline does between its launches (on a real llama.cpp,
	// correct configurations differed on 8–18% of prompts), where a broken
	// one changes most outputs.
	DefaultGreedyMargin = 0.25
	// DefaultGreedyMarginOneLaunch replaces DefaultGreedyMargin when the
	// baseline has one launch: how much its outputs vary between launches
	// is then not measured, so only a large difference is called a bug.
	DefaultGreedyMarginOneLaunch = 0.5
)

// outputsByPrompt maps a prompt index to the output hashes seen for it.
func outputsByPrompt(recs iter.Seq2[int, *measure.Record]) map[int]map[string]bool {
	out := map[int]map[string]bool{}
	for _, r := range recs {
		if !r.OK() || r.OutputHash == "" {
			continue
		}
		if out[r.Prompt] == nil {
			out[r.Prompt] = map[string]bool{}
		}
		out[r.Prompt][r.OutputHash] = true
	}
	return out
}

// greedyCounts is one variant's outputs against the baseline's, over the
// prompts both answered.
type greedyCounts struct {
	Common int // prompts both answered
	// Differ is how many of them the variant gave an output for that is
	// none of the baseline's outputs for the prompt.
	Differ int
	// SelfDiffer is how many of them the baseline itself did not always
	// answer the same (more than one output, within a launch or between).
	SelfDiffer int
	// BaseLaunches is how many launches the baseline's outputs come from.
	BaseLaunches int
}

// judge reports whether the variant changes greedy outputs clearly more
// often than the baseline differs from itself: the one-sided Fisher exact
// p of Differ of Common against SelfDiffer of Common under
// DefaultGreedyAlpha, and the difference of the two shares at least the
// margin. Fisher's test takes the two counts as independent; they are over
// the same prompts, and the prompts near a tie are the ones that flip on
// both sides, so the test is conservative here, as a claim of a bug should
// be.
func (g greedyCounts) judge() (bug bool, p, margin float64) {
	margin = DefaultGreedyMargin
	if g.BaseLaunches < 2 {
		margin = DefaultGreedyMarginOneLaunch
	}
	if g.Common == 0 {
		return false, 1, margin
	}
	p = rule.FisherGreater(g.Differ, g.Common, g.SelfDiffer, g.Common)
	excess := float64(g.Differ-g.SelfDiffer) / float64(g.Common)
	return p < DefaultGreedyAlpha && excess >= margin, p, margin
}

// checkGreedy compares outputs with the baseline's under temperature 0. A
// speculative decoding that changes greedy output is a correctness bug, but
// greedy decoding is not deterministic on every server (batch-dependent
// numerics flip near-ties of the top two tokens), so a variant is called
// likely broken only when its outputs differ clearly more often than the
// baseline's differ from each other (greedyCounts.judge).
func checkGreedy(v *verdict.Verdict, in records.Input) []verdict.Note {
	if v.Temperature != 0 {
		return []verdict.Note{{Severity: verdict.SeverityInfo, Check: verdict.CheckGreedy,
			Text: fmt.Sprintf("temperature %v: outputs are not compared with the baseline's", v.Temperature)}}
	}
	base := outputsByPrompt(in.Records(v.Baseline))
	if len(base) == 0 {
		return []verdict.Note{{Severity: verdict.SeverityWarn, Check: verdict.CheckGreedy,
			Text: "no output hashes in the baseline's records: greedy outputs could not be compared"}}
	}
	launches := 0
	for _, l := range in.Launches[v.Baseline] {
		if len(outputsByPrompt(records.Each(l.Records))) > 0 {
			launches++
		}
	}
	var notes []verdict.Note
	unstable := 0
	for _, hs := range base {
		if len(hs) > 1 {
			unstable++
		}
	}
	if unstable > 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckGreedy, Scenario: v.Baseline,
			Text: fmt.Sprintf("%s gave different outputs for the same prompt at temperature 0 (%d of %d prompts): greedy decoding is not deterministic there (batch-dependent numerics), so a variant's differing outputs are weighed against this",
				v.Baseline, unstable, len(base))})
	}
	compared := 0
	for _, s := range v.Scenarios {
		if s.Name == v.Baseline || s.Failed() {
			continue
		}
		g := greedyCounts{BaseLaunches: launches}
		var example []int
		for p, hs := range outputsByPrompt(in.Records(s.Name)) {
			bh, ok := base[p]
			if !ok {
				continue
			}
			g.Common++
			if len(bh) > 1 {
				g.SelfDiffer++
			}
			for h := range hs {
				if !bh[h] {
					g.Differ++
					example = append(example, p)
					break
				}
			}
		}
		compared += g.Common
		if g.Differ == 0 {
			continue
		}
		slices.Sort(example)
		notes = append(notes, greedyNote(s.Name, g, example[0]))
	}
	if len(notes) == 0 && compared > 0 {
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckGreedy,
			Text: "greedy outputs of every variant equal the baseline's for every common prompt"})
	}
	return notes
}

// greedyNote says how a variant's outputs differ from the baseline's, and
// calls it a likely bug only when greedyCounts.judge does.
func greedyNote(name string, g greedyCounts, first int) verdict.Note {
	bug, p, margin := g.judge()
	text := fmt.Sprintf("%s: outputs differ on %d of %d prompts (first: prompt %d); ", name, g.Differ, g.Common, first)
	if g.BaseLaunches >= 2 {
		text += fmt.Sprintf("the baseline differs from itself on %d of %d over its %d launches", g.SelfDiffer, g.Common, g.BaseLaunches)
	} else {
		text += fmt.Sprintf("the baseline ran once, so how often its outputs differ between launches is not measured (within its launch: %d of %d)", g.SelfDiffer, g.Common)
	}
	test := fmt.Sprintf("one-sided Fisher %s", verdict.PClause(p))
	switch {
	case bug:
		return verdict.Note{Severity: verdict.SeverityRed, Check: verdict.CheckGreedy, Scenario: name,
			Text: text + fmt.Sprintf("; clearly more (%s, at least %.0f points above): likely a speculative decoding bug, since at temperature 0 a variant must not change the text",
				test, 100*margin)}
	case g.SelfDiffer > 0:
		text += fmt.Sprintf("; greedy decoding is not deterministic here, and the difference is not clearly larger (%s; a bug is called at p<%v and %.0f points above)",
			test, DefaultGreedyAlpha, 100*margin)
	case g.BaseLaunches < 2:
		text += fmt.Sprintf("; not a large enough difference to call a bug (%s; with one launch a bug is called at p<%v and %.0f points above); more rounds would measure the baseline against itself",
			test, DefaultGreedyAlpha, 100*margin)
	default:
		text += fmt.Sprintf("; not clearly more than the baseline's own (%s; a bug is called at p<%v and %.0f points above), so greedy decoding may not be deterministic here",
			test, DefaultGreedyAlpha, 100*margin)
	}
	return verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckGreedy, Scenario: name, Text: text}
}

func checkConcurrency(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		for _, l := range s.Levels {
			if l.Saturated {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckSaturation, Scenario: s.Name, Level: l.Level,
					Text: fmt.Sprintf("%s %s: the server could not keep up with the arrivals (%s); the level is shown as saturated and not compared",
						s.Name, measure.LevelName(l.Level), l.Saturation)})
			}
			if measure.IsRate(l.Level) {
				if l.ClientLimited {
					notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckClient, Scenario: s.Name, Level: l.Level,
						Text: fmt.Sprintf("%s %s: the load generator could not keep to the arrival schedule (late sends or its in-flight cap; see levels.json); not decided: %s",
							s.Name, measure.LevelName(l.Level), verdict.DoubtAdvice(verdict.DoubtPace))})
				}
				continue
			}
			if l.AchievedConcurrency < verdict.DefaultMinConcurrencyRatio*float64(l.Level.Concurrency) {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckConcurrency, Scenario: s.Name, Level: l.Level,
					Text: fmt.Sprintf("%s %s: only %.1f requests in flight on average in the steady state",
						s.Name, measure.LevelName(l.Level), l.AchievedConcurrency)})
			}
			if l.ClientLimited {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckClient, Scenario: s.Name, Level: l.Level,
					Text: fmt.Sprintf("%s %s: the load generator may have set the pace (it held freed slots empty %.1f%% of the time, dispatch lag p99 %.2f ms); not decided: %s",
						s.Name, measure.LevelName(l.Level), 100*l.PaceShare, l.DispatchLagP99*1e3, verdict.DoubtAdvice(verdict.DoubtPace))})
			}
		}
	}
	if len(notes) == 0 {
		text := fmt.Sprintf("achieved concurrency within %.0f%% of the target at every level; the client kept up",
			100*(1-verdict.DefaultMinConcurrencyRatio))
		if len(v.Levels) > 0 && measure.IsRate(v.Levels[0]) {
			text = "every server kept up with the arrivals at every level, and the client kept to the schedule"
		}
		notes = append(notes, verdict.Note{Severity: verdict.SeverityInfo, Check: verdict.CheckConcurrency, Text: text})
	}
	return notes
}

// checkSamples surfaces levels whose samples are too few for a difference
// ever to be significant, and the samples' own warnings.
func checkSamples(v *verdict.Verdict) []verdict.Note {
	var notes []verdict.Note
	for _, s := range v.Scenarios {
		var hopeless []string
		for _, c := range v.Levels {
			if cell := v.Cell(c, s.Name); cell != nil && cell.Hopeless {
				hopeless = append(hopeless, measure.LevelName(c))
			}
		}
		if len(hopeless) > 0 {
			notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckSamples, Scenario: s.Name,
				Text: fmt.Sprintf("%s: too few launches or samples to ever reach significance at alpha %v at %s; add rounds",
					s.Name, v.Alpha, strings.Join(hopeless, ", "))})
		}
		for _, l := range s.Levels {
			for _, w := range l.Warnings {
				notes = append(notes, verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckSamples, Scenario: s.Name, Level: l.Level,
					Text: s.Name + " " + w})
			}
		}
	}
	return notes
}
