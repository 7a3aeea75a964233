package explain

import (
	"fmt"
	"math"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// explainCrossovers adds to each variant's crossover the figures that
// explain its turn (Why) and its break-even load (breakeven.go). engines
// names each scenario's engine, for the setting a break-even suggests.
func explainCrossovers(v *verdict.Verdict, engines map[string]string) {
	for i := range v.Crossovers {
		x := &v.Crossovers[i]
		s := v.Scenario(x.Scenario)
		if s == nil || len(x.Segments) == 0 {
			continue
		}
		var levels []measure.Level
		var cells []verdict.Cell
		for _, c := range v.Levels {
			if cell := v.Cell(c, x.Scenario); cell != nil && cell.Compared {
				levels, cells = append(levels, c), append(cells, *cell)
			}
		}
		x.BreakEven = breakEven(v, x.Scenario, engines[x.Scenario], levels, cells)
		if !speculative(s) {
			// The running batch grows with the load for the baseline as
			// for the variant: beside a variant with no speculative step
			// (a flag flip) it explains nothing, and a setting that turns
			// speculation off is no setting for it. The break-even load
			// stands; the batch there and the why do not.
			dropBatch(x.BreakEven)
			continue
		}
		x.Why = why(s, x, levels)
	}
}

// speculative reports whether the scenario's server reported speculative
// acceptance at all: a level's accept length, or the scenario's.
func speculative(s *verdict.Scenario) bool {
	if s.AcceptLength != nil {
		return true
	}
	for i := range s.Levels {
		if s.Levels[i].Accept != nil || s.Levels[i].AcceptLength != nil {
			return true
		}
	}
	return false
}

// why is "loses from C=5: accept length 2.47 at every level (2.41–2.55)
// while the running batch grows from 5 to 70": the turn, then what the
// variant's own acceptance and the server's batch did over the compared
// levels, each only as far as the data hold. Empty when there is no turn
// or no figure to give.
func why(s *verdict.Scenario, x *verdict.Crossover, levels []measure.Level) string {
	var turn string
	switch {
	case x.StartsLosing != nil:
		turn = "loses from " + measure.LevelName(x.StartsLosing.To)
	case x.StopsWinning != nil:
		turn = "stops winning at " + measure.LevelName(x.StopsWinning.To)
	default:
		return ""
	}
	var parts []string
	if a := acceptWords(s, levels); a != "" {
		parts = append(parts, a)
	}
	if b := batchWords(s, levels); b != "" {
		parts = append(parts, b)
	}
	if len(parts) == 0 {
		return ""
	}
	return x.Scenario + " " + turn + ": " + strings.Join(parts, " while ")
}

// acceptWords says how the accept length ran over the levels: one figure
// "at every level" only when every level's interval holds a common value
// (the levels cannot be told apart), else from the first level's to the
// last's.
func acceptWords(s *verdict.Scenario, levels []measure.Level) string {
	var first, last *verdict.LevelAccept
	var fromL, toL measure.Level
	loMax, hiMin := math.Inf(-1), math.Inf(1)
	minC, maxC, logSum := math.Inf(1), math.Inf(-1), 0.0
	n, intervals := 0, true
	for _, c := range levels {
		l := s.Level(c)
		if l == nil || l.Accept == nil {
			continue
		}
		a := l.Accept
		if first == nil {
			first, fromL = a, c
		}
		last, toL = a, c
		e := a.Length
		intervals = intervals && e.N >= 2
		loMax, hiMin = math.Max(loMax, e.Lo), math.Min(hiMin, e.Hi)
		minC, maxC = math.Min(minC, e.Center), math.Max(maxC, e.Center)
		logSum += math.Log(e.Center)
		n++
	}
	switch {
	case n == 0:
		return ""
	case n == 1:
		return fmt.Sprintf("accept length %.2f at %s", first.Length.Center, measure.LevelName(fromL))
	case intervals && loMax <= hiMin:
		return fmt.Sprintf("accept length %.2f at every level (%.2f–%.2f)", math.Exp(logSum/float64(n)), minC, maxC)
	}
	return fmt.Sprintf("accept length from %.2f at %s to %.2f at %s", first.Length.Center, measure.LevelName(fromL),
		last.Length.Center, measure.LevelName(toL))
}

// batchWords is what the server's running batch (its mean over the steady
// window) did from the first compared level to the last that report it.
func batchWords(s *verdict.Scenario, levels []measure.Level) string {
	var from, to float64
	n := 0
	for _, c := range levels {
		l := s.Level(c)
		if l == nil || l.Server == nil || l.Server.Running == nil {
			continue
		}
		if n == 0 {
			from = l.Server.Running.Mean
		}
		to = l.Server.Running.Mean
		n++
	}
	switch {
	case n < 2:
		return ""
	case to > from:
		return fmt.Sprintf("the running batch grows from %s to %s", batchText(from), batchText(to))
	case to < from:
		return fmt.Sprintf("the running batch falls from %s to %s", batchText(from), batchText(to))
	}
	return "the running batch stays at " + batchText(from)
}

// batchText is a mean batch: whole above 10, one decimal under.
func batchText(b float64) string {
	if b >= 10 {
		return fmt.Sprintf("%.0f", b)
	}
	return fmt.Sprintf("%.1f", b)
}
