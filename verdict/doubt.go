package verdict

import (
	"fmt"
	"math"
	"slices"

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
	// DoubtCache: the prefix cache could not be cleared before the level
	// while its prompts repeat: the level may measure the cache.
	DoubtCache = "cache"
)

// Doubt is one reason bakeoff questions a scenario's measurement at a level.
type Doubt struct {
	Kind string `json:"kind"`
	// Scenario is whose measurement is doubted.
	Scenario string `json:"scenario"`
	// Text says what was seen, with its figure: "the client held freed
	// slots empty 2.3% of the time".
	Text string `json:"text"`
}

// DoubtWords is a doubt kind as a table cell names it.
func DoubtWords(kind string) string {
	switch kind {
	case DoubtPace:
		return "client set the pace"
	case DoubtCounts:
		return "token counts disagree"
	case DoubtCache:
		return "cache not cleared"
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
		return "make the engine's cache reset work (for vLLM, VLLM_SERVER_DEV_MODE=1 in engine.env; docs/CONFIG.md, sweep) or set sweep.unique_prompts, so that each level starts cold"
	}
	return ""
}

// levelDoubts are the reasons to doubt one scenario's measurement at level
// l over every launch: pacing (a closed loop's over every launch pooled,
// Level.ClientLimited), server and client counts (the means over the
// launches that report both) and a failed cache reset on repeated prompts,
// the last two from l.launchFacts.
func levelDoubts(name string, l *Level) []Doubt {
	var out []Doubt
	if l.ClientLimited {
		text := fmt.Sprintf("over every launch the client held freed slots empty %.1f%% of the time", 100*l.PaceShare)
		if measure.IsRate(l.Level) {
			text = "the load generator could not keep to the arrival schedule in some launch"
		}
		out = append(out, Doubt{Kind: DoubtPace, Scenario: name, Text: text})
	}
	return append(out, factDoubts(name, l.launchFacts, func(int) bool { return true })...)
}

// launchFacts are one launch's summary facts at a level that the doubts
// read: the load generator's own pacing verdict on an open loop, the
// server's and the client's token rates, and a cache left uncleared.
type launchFacts struct {
	round          int
	rateLimited    bool
	server, client float64 // tok/s; 0 when the launch reports no server figure
	cache          bool
}

// levelFacts are every launch's facts at level c, from its summary.
func levelFacts(launches []records.Launch, c measure.Level) []launchFacts {
	var out []launchFacts
	for _, ln := range launches {
		if ln.Result == nil {
			continue
		}
		f := launchFacts{round: ln.Round}
		for _, ls := range ln.Result.Levels {
			if ls.Level != c {
				continue
			}
			f.rateLimited = f.rateLimited || ls.ClientLimited
			if ls.Server != nil && ls.Server.GenTokS != nil && ls.Throughput > 0 {
				f.server += ls.Server.GenTokS.Value
				f.client += ls.Throughput
			}
			f.cache = f.cache || (ls.CacheReset == "" && ls.CacheResetNote != "" && !ls.UniquePrompts)
		}
		out = append(out, f)
	}
	return out
}

// doubtsUpTo are the level's doubts as a look that saw only the launches
// of the rounds keep admits had them: the pacing pooled over those
// launches, the counts and the cache from their summaries. A replayed look
// then doubts exactly what the live look did, so the report decides what
// the run decided; the level's Doubts are over every launch.
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
	return append(out, factDoubts(name, l.launchFacts, keep)...)
}

// factDoubts are the doubts the launches' summaries raise, over the
// launches of the rounds keep admits: the server's and the client's token
// counts apart by more than DefaultServerThroughputTolerance, and a cache
// left uncleared while prompts repeat.
func factDoubts(name string, facts []launchFacts, keep func(round int) bool) []Doubt {
	var out []Doubt
	var server, client float64
	cache := false
	for _, f := range facts {
		if !keep(f.round) {
			continue
		}
		server, client = server+f.server, client+f.client
		cache = cache || f.cache
	}
	if client > 0 {
		if gap := server/client - 1; math.Abs(gap) > DefaultServerThroughputTolerance {
			out = append(out, Doubt{Kind: DoubtCounts, Scenario: name,
				Text: fmt.Sprintf("the server counted %+.1f%% against the client's tokens", 100*gap)})
		}
	}
	if cache {
		out = append(out, Doubt{Kind: DoubtCache, Scenario: name,
			Text: "the prefix cache was not cleared before the level and its prompts repeat"})
	}
	return out
}

// pairDoubtsUpTo are the doubts of either side of a comparison at level c
// as a look that saw the rounds keep admits had them.
func pairDoubtsUpTo(a, b *Scenario, c measure.Level, keep func(round int) bool) []Doubt {
	var out []Doubt
	for _, s := range []*Scenario{a, b} {
		if l := s.Level(c); l != nil {
			out = append(out, l.doubtsUpTo(s.Name, keep)...)
		}
	}
	return out
}

// pairDoubts are the doubts of either side of a comparison at level c.
func pairDoubts(a, b *Scenario, c measure.Level) []Doubt {
	var out []Doubt
	for _, s := range []*Scenario{a, b} {
		if l := s.Level(c); l != nil {
			out = append(out, l.Doubts...)
		}
	}
	return out
}

// doubted turns a comparison into a doubted one: its estimate stays, for
// the curious, but it carries no outcome, no interval it was decided on and
// no p-value.
func doubted(c *Comparison, ds []Doubt) {
	c.Outcome, c.Doubts = OutcomeDoubted, ds
	c.OutcomeLo, c.OutcomeHi, c.OutcomeConfidence = 0, 0, 0
	c.P, c.PAdjusted = 0, 0
}

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
