package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict/records"
)

// OutcomeDoubted is a comparison bakeoff does not decide because its own
// checks question one side's measurement at that level (Level.Doubts): it
// leaves the corrected family, the sequential looks and the row's winner,
// and its cell shows the doubt instead of an outcome. An estimate made from
// a measurement the tool itself distrusts would be an answer it cannot
// stand behind, and a family member it cannot decide would only cost the
// others power.
const OutcomeDoubted = "doubted"

// Kinds of doubt about one scenario's measurement at one level.
const (
	// DoubtPace: the load generator may have set the pace (Level.PaceShare
	// above DefaultClientPaceShare, or the concurrency never reached its
	// target): the figure is partly the client's.
	DoubtPace = "pace"
	// DoubtCounts: the server's own generation counter and the client's
	// received tokens disagree by more than
	// DefaultServerThroughputTolerance over the same steady window: one of
	// the two is not measuring what it claims.
	DoubtCounts = "counts"
	// DoubtCache: the prefix cache treated the two sides of a comparison
	// differently (cleared before the level on one side only, or, left warm
	// on both, serving a different share of their prompt tokens): the
	// difference may be the cache's. A cache left warm on both sides alike
	// (the same prompts in the same order on the same engine) favours
	// neither and is a note, not a doubt (pairCacheDoubts).
	DoubtCache = "cache"
	// DoubtHost: the host was disturbed around some launch's sweep: a GPU
	// of the launch held down by heat or its power supply
	// (hoststate.Launch.GPUDisturbed), a doubt of that side; or the CPUs
	// oversubscribed as one side's sweep began and idle as the other's
	// did in the same round (hoststate.Launch.Busy and Quiet), a doubt of
	// the pair, since a host busy for both alike favours neither. The
	// figure is partly the host's.
	DoubtHost = "host"
)

// Doubt is one reason bakeoff questions a scenario's measurement at a level.
type Doubt struct {
	Kind string `json:"kind"`
	// Scenario is whose measurement is doubted.
	Scenario string `json:"scenario"`
	// Text says what was seen, with its figure: "the client held freed
	// slots empty 2.3% of the time".
	Text string `json:"text"`
	// Lasting is set when no later round can clear the doubt (the side
	// left warm has no reset that ever worked, so every launch will be
	// the same): under a sequential plan the comparison stops at its first
	// look instead of keeping its variant launching to the maximum.
	Lasting bool `json:"lasting,omitempty"`
}

// DoubtWords is a doubt kind as a table cell names it.
func DoubtWords(kind string) string {
	switch kind {
	case DoubtPace:
		return "client set the pace"
	case DoubtCounts:
		return "token counts disagree"
	case DoubtCache:
		return "cache differs"
	case DoubtHost:
		return "host disturbed"
	}
	return kind
}

// DoubtAdvice is what to do about a doubt of that kind, as the notes say it
// after "not decided: ".
func DoubtAdvice(kind string) string {
	switch kind {
	case DoubtPace:
		return "give the load generator more cores or fewer in-flight requests per core (lower concurrency levels, or host.sweep_mode: host to run it beside the server instead of through a tunnel), or run fewer things beside it"
	case DoubtCounts:
		return "check the server's usage reports and /metrics against the records in requests.jsonl; the level's throughput is not trustworthy until they agree"
	case DoubtCache:
		return "clear both sides' prefix cache the same way (prefix_cache, docs/CONFIG.md), or set sweep.unique_prompts"
	case DoubtHost:
		return "rerun the disturbed rounds (--only NAME --round K) once nothing else runs on the host and its GPUs are cool; summary.json's host_state holds each launch's readings"
	}
	return ""
}

// levelDoubts are the reasons to doubt one scenario's measurement at level
// l over every launch, whatever it is compared with: pacing (a closed
// loop's over every launch pooled, Level.ClientLimited), server and
// client counts (the means over the launches that report both, from
// l.launchFacts) and a GPU held down (any launch's). The cache and a busy
// host are doubts of a pair, not of one side (pairCacheDoubts,
// pairBusyDoubts).
func levelDoubts(name string, l *Level) []Doubt {
	var out []Doubt
	if l.ClientLimited {
		text := fmt.Sprintf("over every launch the client held freed slots empty %.1f%% of the time", 100*l.PaceShare)
		if measure.IsRate(l.Level) {
			text = "the load generator could not keep to the arrival schedule in some launch"
		}
		out = append(out, Doubt{Kind: DoubtPace, Scenario: name, Text: text})
	}
	all := func(int) bool { return true }
	out = append(out, countDoubts(name, l.launchFacts, all)...)
	return append(out, hostDoubts(name, l.launchFacts, all)...)
}

// launchFacts are one launch's summary facts at a level that the doubts
// read: the load generator's own pacing verdict on an open loop, the
// server's and the client's token rates, what was done about the prefix
// cache with what it served, and what disturbed the host around the
// sweep.
type launchFacts struct {
	round          int
	rateLimited    bool
	server, client float64 // tok/s; 0 when the launch reports no server figure
	// warm: the prefix cache was not cleared before the level while its
	// prompts repeat (cacheWhy says why); cold: it was cleared, every
	// prompt was unique, or the server keeps no prefix cache.
	warm, cold bool
	cacheWhy   string
	// cached and prompt are the measured requests' cached and prompt
	// tokens, over those that report cached tokens.
	cached, prompt int
	// gpuDisturbed says which GPU of the launch was held down during its
	// sweep, which holds every level; busy how loaded the host was as the
	// sweep began, and quiet whether it was quiet, with its load (each
	// empty or false when not read).
	gpuDisturbed, busy string
	quiet              bool
	load               float64
}

// levelFacts are every launch's facts at level c, from its summary and
// records.
func levelFacts(launches []records.Launch, c measure.Level) []launchFacts {
	var out []launchFacts
	for _, ln := range launches {
		if ln.Result == nil {
			continue
		}
		hs := ln.Result.HostState
		f := launchFacts{round: ln.Round, gpuDisturbed: hs.GPUDisturbed(), busy: hs.Busy()}
		f.load, f.quiet = hs.Quiet()
		for _, ls := range ln.Result.Levels {
			if ls.Level != c {
				continue
			}
			f.rateLimited = f.rateLimited || ls.ClientLimited
			if ls.Server != nil && ls.Server.GenTokS != nil && ls.Server.GenTokS.Unchecked == "" && ls.Throughput > 0 {
				f.server += ls.Server.GenTokS.Value
				f.client += ls.Throughput
			}
			switch {
			case ls.CacheReset != "" || ls.UniquePrompts || ls.NoPrefixCache:
				f.cold = true
			case ls.CacheResetNote != "":
				f.warm, f.cacheWhy = true, ls.CacheResetNote
			}
		}
		for i := range ln.Records {
			r := &ln.Records[i]
			if r.Level == c && !r.Warmup && r.OK() && r.CachedTokens != nil && r.PromptTokens > 0 {
				f.cached += *r.CachedTokens
				f.prompt += r.PromptTokens
			}
		}
		out = append(out, f)
	}
	return out
}

// doubtsUpTo are the level's doubts as a look that saw only the launches
// of the rounds keep admits had them: the pacing pooled over those
// launches, the counts from their summaries. A replayed look then doubts
// exactly what the live look did, so the report decides what the run
// decided; the level's Doubts are over every launch.
func (l *Level) doubtsUpTo(name string, keep func(round int) bool) []Doubt {
	var out []Doubt
	if measure.IsRate(l.Level) {
		for _, f := range l.launchFacts {
			if keep(f.round) && f.rateLimited {
				out = append(out, Doubt{Kind: DoubtPace, Scenario: name, Text: "the load generator could not keep to the arrival schedule in some launch"})
				break
			}
		}
	} else {
		var lag, slot float64
		for _, ll := range l.Launches {
			if keep(ll.Round) {
				lag, slot = lag+ll.paceLag, slot+ll.paceSlot
			}
		}
		if slot > 0 && lag/slot > DefaultClientPaceShare {
			out = append(out, Doubt{Kind: DoubtPace, Scenario: name,
				Text: fmt.Sprintf("over the launches so far the client held freed slots empty %.1f%% of the time", 100*lag/slot)})
		}
	}
	out = append(out, countDoubts(name, l.launchFacts, keep)...)
	return append(out, hostDoubts(name, l.launchFacts, keep)...)
}

// countDoubts are the doubts of the server's and the client's token counts,
// over the launches of the rounds keep admits: apart by more than
// DefaultServerThroughputTolerance. Only a counter whose meaning the
// engine's profile knows takes part (measure.ServerFigure.Unchecked).
func countDoubts(name string, facts []launchFacts, keep func(round int) bool) []Doubt {
	var server, client float64
	for _, f := range facts {
		if keep(f.round) {
			server, client = server+f.server, client+f.client
		}
	}
	if client > 0 {
		if gap := server/client - 1; math.Abs(gap) > DefaultServerThroughputTolerance {
			return []Doubt{{Kind: DoubtCounts, Scenario: name,
				Text: fmt.Sprintf("the server counted %+.1f%% against the client's tokens", 100*gap)}}
		}
	}
	return nil
}

// hostDoubts are the doubts of a GPU held down, over the launches of the
// rounds keep admits: one, naming each such launch's round and GPU, when
// any was. A launch is one reading of the configuration; one slowed by its
// GPU would move the level's mean as much as a real change, and unlike
// pacing nothing in the records measures by how much.
func hostDoubts(name string, facts []launchFacts, keep func(round int) bool) []Doubt {
	var parts []string
	for _, f := range facts {
		if keep(f.round) && f.gpuDisturbed != "" {
			parts = append(parts, fmt.Sprintf("round %d: %s", f.round, f.gpuDisturbed))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []Doubt{{Kind: DoubtHost, Scenario: name, Text: "a GPU was held down during the sweep in " + strings.Join(parts, "; in ")}}
}

// pairBusyDoubts are the doubts of a busy host about comparing a and b at
// level c over the rounds keep admits: for each side, the rounds in which
// its sweep began on a busy host (hoststate.Launch.Busy) and the other
// side's, in the same round, on a quiet one. A host busy for both, or
// quiet for both, treats them alike and raises none.
func pairBusyDoubts(a, b *Scenario, c measure.Level, keep func(round int) bool) []Doubt {
	la, lb := a.Level(c), b.Level(c)
	if la == nil || lb == nil {
		return nil
	}
	var out []Doubt
	for _, side := range []struct {
		busy, quiet           string
		busyFacts, quietFacts []launchFacts
	}{{a.Name, b.Name, la.launchFacts, lb.launchFacts}, {b.Name, a.Name, lb.launchFacts, la.launchFacts}} {
		var parts []string
		for _, f := range side.busyFacts {
			if !keep(f.round) || f.busy == "" {
				continue
			}
			for _, g := range side.quietFacts {
				if g.round == f.round && g.quiet {
					parts = append(parts, fmt.Sprintf("round %d (%s; load %.1f as %s's began)", f.round, f.busy, g.load, side.quiet))
				}
			}
		}
		if len(parts) > 0 {
			out = append(out, Doubt{Kind: DoubtHost, Scenario: side.busy,
				Text: fmt.Sprintf("the host was busy as %s's sweep began and quiet as %s's did, in %s", side.busy, side.quiet, strings.Join(parts, "; "))})
		}
	}
	return out
}

// cacheSide is what one side of a comparison did about its prefix cache at
// a level, over the launches a look saw.
type cacheSide struct {
	name string
	// warm: some launch left the cache warm while prompts repeat; always:
	// every launch did (no reset ever worked).
	warm, always   bool
	why            string
	cached, prompt int
	// gpuDisturbed says which GPU of the launch was held down during its
	// sweep, which holds every level; busy how loaded the host was as the
	// sweep began, and quiet whether it was quiet, with its load (each
	// empty or false when not read).
	gpuDisturbed, busy string
	quiet              bool
	load               float64
}

func cacheOf(name string, l *Level, keep func(round int) bool) cacheSide {
	s := cacheSide{name: name, always: true}
	n := 0
	for _, f := range l.launchFacts {
		if !keep(f.round) {
			continue
		}
		n++
		if f.warm {
			s.warm, s.why = true, f.cacheWhy
		} else {
			s.always = false
		}
		s.cached += f.cached
		s.prompt += f.prompt
	}
	s.always = s.always && s.warm && n > 0
	return s
}

// share is the percentage of prompt tokens served from the cache, and
// whether the server reported any.
func (s cacheSide) share() (float64, bool) {
	if s.prompt == 0 {
		return 0, false
	}
	return 100 * float64(s.cached) / float64(s.prompt), true
}

// DefaultCacheShareGap is how far apart, in percentage points, two sides
// whose prefix caches were both left warm may be in the share of prompt
// tokens the cache served before the comparison is doubted: beyond it the
// cache treated them differently, and the difference may be the cache's.
const DefaultCacheShareGap = 5.0

// pairCacheDoubts are the prefix cache's doubts about comparing a and b at
// level c over the launches keep admits. A cache left warm on both sides
// alike cannot favour either (the same prompts in the same order reach the
// same engine on both), so it raises none: only evidence that the cache
// treated the sides differently does. That is a reset that cleared one
// side's cache but not the other's (lasting when the warm side's reset
// never worked, as no later round will clear it), or, warm on both, shares
// of prompt tokens served from the cache that differ by more than
// DefaultCacheShareGap where the server reports them. Cleared on both
// sides, a difference in the share is the configurations' own (one may
// cache more within a level): it is theirs to show, not a doubt.
func pairCacheDoubts(a, b *Scenario, c measure.Level, keep func(round int) bool) []Doubt {
	la, lb := a.Level(c), b.Level(c)
	if la == nil || lb == nil {
		return nil
	}
	sa, sb := cacheOf(a.Name, la, keep), cacheOf(b.Name, lb, keep)
	switch {
	case sa.warm != sb.warm:
		w, cold := sa, sb
		if sb.warm {
			w, cold = sb, sa
		}
		return []Doubt{{Kind: DoubtCache, Scenario: w.name, Lasting: w.always,
			Text: fmt.Sprintf("the prefix cache was cleared before the level for %s but not for %s, and the prompts repeat: %s", cold.name, w.name, w.why)}}
	case sa.warm:
		pa, okA := sa.share()
		pb, okB := sb.share()
		if okA && okB && math.Abs(pa-pb) > DefaultCacheShareGap {
			return []Doubt{{Kind: DoubtCache, Scenario: a.Name,
				Text: fmt.Sprintf("the prefix cache, cleared on neither side, served %.1f%% of %s's prompt tokens against %.1f%% of %s's", pa, a.Name, pb, b.Name)}}
		}
	}
	return nil
}

// pairDoubtsUpTo are the doubts about comparing a and b at level c as a
// look that saw the rounds keep admits had them: either side's own, and
// the cache's about the pair.
func pairDoubtsUpTo(a, b *Scenario, c measure.Level, keep func(round int) bool) []Doubt {
	var out []Doubt
	for _, s := range []*Scenario{a, b} {
		if l := s.Level(c); l != nil {
			out = append(out, l.doubtsUpTo(s.Name, keep)...)
		}
	}
	out = append(out, pairCacheDoubts(a, b, c, keep)...)
	return append(out, pairBusyDoubts(a, b, c, keep)...)
}

// pairDoubts are the doubts about comparing a and b at level c over every
// launch.
func pairDoubts(a, b *Scenario, c measure.Level) []Doubt {
	var out []Doubt
	for _, s := range []*Scenario{a, b} {
		if l := s.Level(c); l != nil {
			out = append(out, l.Doubts...)
		}
	}
	all := func(int) bool { return true }
	out = append(out, pairCacheDoubts(a, b, c, all)...)
	return append(out, pairBusyDoubts(a, b, c, all)...)
}

// Lasting reports whether a doubt of ds is one no later round can clear
// (Doubt.Lasting): the comparison can then never be decided, whatever its
// other doubts, which may clear (a busy host's) or not.
func Lasting(ds []Doubt) bool {
	for _, d := range ds {
		if d.Lasting {
			return true
		}
	}
	return false
}

// doubted turns a comparison into a doubted one: its estimate stays, for
// the curious, but it carries no outcome, no interval it was decided on and
// no p-value.
func doubted(c *Comparison, ds []Doubt) {
	c.Outcome, c.Doubts = OutcomeDoubted, ds
	c.OutcomeLo, c.OutcomeHi, c.OutcomeConfidence = 0, 0, 0
	c.P, c.PAdjusted = 0, 0
}

// MarkDoubted turns c into a doubted comparison, as the verdict's own are:
// for a diff, whose rows stand on measurements a run doubted.
func MarkDoubted(c *Comparison, ds []Doubt) { doubted(c, ds) }

// DoubtKinds are the kinds of ds, once each, in the order first seen.
func DoubtKinds(ds []Doubt) []string {
	var out []string
	for _, d := range ds {
		if !slices.Contains(out, d.Kind) {
			out = append(out, d.Kind)
		}
	}
	return out
}

// DefaultServerThroughputTolerance is how far the server's generation
// throughput over a steady window may stray from the client's before the
// verdict says so: the two count the same tokens over the same window, so a
// larger gap means one of them is not measuring what it claims (tokens the
// client never received, a counter that lags, a window that is not steady).
const DefaultServerThroughputTolerance = 0.05
