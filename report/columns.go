package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// The per-level columns: what every renderer shows of one scenario at one
// level, declared once. The text report's detail lines, the Markdown and
// HTML detail tables and summary.csv iterate levelColumnsAt the run's
// percentiles, and the browser test reads each figure back from
// verdict.json through the same Of. A new per-level figure is a new entry
// here (and its field in verdict.Level).

// figure is one number of a scenario at one level.
type figure struct {
	// Field names it on the HTML page (data-field), where tests read it
	// back; empty for a figure only summary.csv has.
	Field string
	// CSV is its summary.csv column; empty for one the CSV does not have.
	CSV string
	// Of reads it from the level; ok is false when the level has none (no
	// power readings, no accept length): an empty CSV cell, "-" in tables.
	Of func(l *verdict.Level) (x float64, ok bool)
	// Str, set instead of Of, reads a summary.csv cell that is words (where
	// a figure came from); such a figure has no Field.
	Str func(l *verdict.Level) string
	// Scale turns Of's unit into the one shown (TPOT: s into ms); 1 when 0.
	Scale float64
	// Digits are the decimals shown, or Text formats the shown value.
	Digits int
	Text   func(shown float64) string
}

// shown is f's value at l as the tables write it, in the unit shown, and
// whether l has one.
func (f figure) shown(l *verdict.Level) (string, float64, bool) {
	x, ok := f.Of(l)
	if !ok {
		return "-", 0, false
	}
	x *= f.scale()
	if f.Text != nil {
		return f.Text(x), x, true
	}
	return strconv.FormatFloat(x, 'f', f.Digits, 64), x, true
}

// scale is Scale, 1 when unset.
func (f figure) scale() float64 {
	if f.Scale == 0 {
		return 1
	}
	return f.Scale
}

// levelColumn is one column of a scenario's per-level table.
type levelColumn struct {
	// Head titles it in every table; the text detail line uses it as the
	// figure's label.
	Head string
	// Figures are its numbers, in CSV order.
	Figures []figure
	// Layout places the figures that have a Field, in order, at its %s;
	// empty joins them with "/".
	Layout string
	// Only, when set, says whether a scenario's table has the column at all:
	// the CSV always has it.
	Only func(s *verdict.Scenario) bool
	// PerRound expands the column into one per round, its figure read from
	// each launch (HTML only: the text and Markdown tables have no room).
	PerRound bool
	// Saturated keeps the column at a saturated level, whose other figures
	// grow with the level's length and give way to what was seen.
	Saturated bool
}

// float reads a float field; count an int field; each always present.
func float(get func(l *verdict.Level) float64) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) { return get(l), true }
}

func count(get func(l *verdict.Level) int) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) { return float64(get(l)), true }
}

// energy reads a figure of the level's energy, absent without power
// readings.
func energy(get func(e *verdict.LevelEnergy) float64) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) {
		if l.Energy == nil {
			return 0, false
		}
		return get(l.Energy), true
	}
}

// hwFigure is an interval's half-width as a percentage of its center, as
// halfWidth writes it.
func hwFigure(field string, of func(l *verdict.Level) (verdict.Estimate, bool)) figure {
	return figure{Field: field, Text: hwText, Of: func(l *verdict.Level) (float64, bool) {
		e, ok := of(l)
		return e.HalfWidthPct(), ok
	}}
}

func hasEnergyColumn(s *verdict.Scenario) bool { return hasEnergy(*s) }

func hasAcceptLength(s *verdict.Scenario) bool {
	for _, l := range s.Levels {
		if l.AcceptLength != nil {
			return true
		}
	}
	return false
}

// roundFigure is the per-round column's figure: launchThroughput fills in
// the launch.
var roundFigure = figure{Field: "launch-throughput", Digits: 1}

// levelColumnsAt are the per-level columns, in the order every table and
// the CSV show them, with each latency at the percentiles ps (the run's,
// verdict.Verdict.Percentiles).
func levelColumnsAt(ps []float64) []levelColumn {
	return []levelColumn{
		{Head: "launches", Saturated: true, Figures: []figure{
			{Field: "launches", CSV: "launches", Of: count(func(l *verdict.Level) int { return len(l.Launches) })},
			{CSV: "samples", Of: count(func(l *verdict.Level) int { return len(l.Samples) })},
		}},
		{Head: "ok / requests", Saturated: true, Layout: "%s/%s", Figures: []figure{
			{Field: "ok", CSV: "ok", Of: count(func(l *verdict.Level) int { return l.OK })},
			{Field: "requests", CSV: "requests", Of: count(func(l *verdict.Level) int { return l.Requests })},
			{CSV: "failed", Of: count(func(l *verdict.Level) int { return l.Failed })},
			{CSV: "tokens", Of: count(func(l *verdict.Level) int { return l.Tokens })},
		}},
		{Head: "tok/s", Layout: "%s ±%s%%", Figures: []figure{
			{Field: "level-throughput", CSV: "throughput_tok_s", Digits: 1, Of: throughputOf(func(e verdict.Estimate) float64 { return e.Center })},
			hwFigure("level-throughput-hw", func(l *verdict.Level) (verdict.Estimate, bool) { return l.Throughput, l.Throughput.N > 0 }),
			{CSV: "throughput_lo", Of: throughputOf(func(e verdict.Estimate) float64 { return e.Lo })},
			{CSV: "throughput_hi", Of: throughputOf(func(e verdict.Estimate) float64 { return e.Hi })},
		}},
		{Head: "tok/s/GPU", Only: hasGPUs, Figures: []figure{
			{Field: "level-throughput-per-gpu", Digits: perGPUDigits, Of: perGPUFigure},
		}},
		{Head: "round %d tok/s", PerRound: true, Figures: []figure{roundFigure}},
		{Head: "per-req tok/s", Figures: []figure{
			{Field: "per-request", CSV: "per_request_tok_s", Digits: 1, Of: float(func(l *verdict.Level) float64 { return l.PerRequest.Mean })},
		}},
		latencyColumn(ps, latencyMetric{"latency", "latency", 1, 2, true, func(l *verdict.Level) measure.Dist { return l.Latency }}),
		latencyColumn(ps, latencyMetric{"TTFT", "ttft", 1, 3, false, func(l *verdict.Level) measure.Dist { return l.TTFT }}),
		latencyColumn(ps, latencyMetric{"TPOT", "tpot", 1e3, 1, false, func(l *verdict.Level) measure.Dist { return l.TPOT }}),
		latencyColumn(ps, latencyMetric{"ITL", "itl", 1e3, 1, false, func(l *verdict.Level) measure.Dist { return l.ITL }}),
		{Head: "in flight", Figures: []figure{
			{Field: "in-flight", CSV: "achieved_concurrency", Digits: 1, Of: float(func(l *verdict.Level) float64 { return l.AchievedConcurrency })},
		}},
		{Head: "accept length", Only: hasAcceptLength, Figures: []figure{
			{Field: "accept-length", CSV: "accept_length", Digits: 2, Of: func(l *verdict.Level) (float64, bool) {
				if l.AcceptLength == nil {
					return 0, false
				}
				return *l.AcceptLength, true
			}},
			{CSV: "accept_length_lo", Of: accept(func(a *verdict.LevelAccept) float64 { return a.Length.Lo })},
			{CSV: "accept_length_hi", Of: accept(func(a *verdict.LevelAccept) float64 { return a.Length.Hi })},
			{CSV: "accept_launches", Of: accept(func(a *verdict.LevelAccept) float64 { return float64(len(a.Launches)) })},
			{CSV: "accept_source", Str: func(l *verdict.Level) string {
				if l.Accept == nil {
					return ""
				}
				return l.Accept.Source
			}},
		}},
		{Head: "server batch", Only: hasServer, Figures: []figure{
			{Field: fieldServerRunning, CSV: "server_running_mean", Digits: 1, Of: serverGauge(func(s *measure.ServerSummary) *measure.GaugeStats { return s.Running }, mean)},
			{CSV: "server_running_max", Of: serverGauge(func(s *measure.ServerSummary) *measure.GaugeStats { return s.Running }, func(g *measure.GaugeStats) float64 { return g.Max })},
			{CSV: "server_queued_mean", Of: serverGauge(func(s *measure.ServerSummary) *measure.GaugeStats { return s.Queued }, mean)},
			{CSV: "server_kv_usage_mean", Of: serverGauge(func(s *measure.ServerSummary) *measure.GaugeStats { return s.KVUsage }, mean)},
			{CSV: "server_preemptions", Of: serverFigure(func(s *measure.ServerSummary) *measure.ServerFigure { return s.Preemptions })},
			{CSV: "server_prefix_hit_rate", Of: serverFigure(func(s *measure.ServerSummary) *measure.ServerFigure { return s.PrefixHitRate })},
			{CSV: "server_accept_length", Of: serverFigure(func(s *measure.ServerSummary) *measure.ServerFigure { return s.AcceptLength })},
			{CSV: "server_gen_tok_s", Of: serverFigure(func(s *measure.ServerSummary) *measure.ServerFigure { return s.GenTokS })},
		}},
		{Head: "J/1k tok (GPU W)", Only: hasEnergyColumn, Layout: "%s ±%s%% (%s W)", Figures: []figure{
			{Field: "level-energy", CSV: "joules_per_1k_tok", Of: energy(func(e *verdict.LevelEnergy) float64 { return e.JoulesPerKTok.Center })},
			{CSV: "joules_per_1k_tok_lo", Of: energy(func(e *verdict.LevelEnergy) float64 { return e.JoulesPerKTok.Lo })},
			{CSV: "joules_per_1k_tok_hi", Of: energy(func(e *verdict.LevelEnergy) float64 { return e.JoulesPerKTok.Hi })},
			hwFigure("level-energy-hw", func(l *verdict.Level) (verdict.Estimate, bool) {
				if l.Energy == nil {
					return verdict.Estimate{}, false
				}
				return l.Energy.JoulesPerKTok, true
			}),
			{Field: "level-power", CSV: "power_w", Of: energy(func(e *verdict.LevelEnergy) float64 { return e.PowerW.Center })},
		}},
	}
}

// The server's figures on the page beyond the detail table's column: the
// timeline panels' captions (html_timeline.go) mark them too.
const (
	fieldServerRunning = "server-running"
	fieldServerQueued  = "server-queued"
	fieldServerKV      = "server-kv"
)

// accept reads a figure of the level's acceptance, absent without one.
func accept(get func(a *verdict.LevelAccept) float64) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) {
		if l.Accept == nil {
			return 0, false
		}
		return get(l.Accept), true
	}
}

func hasServer(s *verdict.Scenario) bool {
	for _, l := range s.Levels {
		if l.Server != nil && l.Server.Running != nil {
			return true
		}
	}
	return false
}

func mean(g *measure.GaugeStats) float64 { return g.Mean }

// serverGauge reads a statistic of one of the server's gauges over the
// level's steady windows, absent when the server did not publish it.
func serverGauge(of func(*measure.ServerSummary) *measure.GaugeStats, get func(*measure.GaugeStats) float64) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) {
		if l.Server == nil || of(l.Server) == nil {
			return 0, false
		}
		return get(of(l.Server)), true
	}
}

// serverFigure reads one of the server's figures over the level's steady
// windows, absent when the server did not publish it.
func serverFigure(of func(*measure.ServerSummary) *measure.ServerFigure) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) {
		if l.Server == nil || of(l.Server) == nil {
			return 0, false
		}
		return of(l.Server).Value, true
	}
}

// throughputOf reads a bound of the level's throughput estimate, absent when
// no launch measured it.
func throughputOf(get func(e verdict.Estimate) float64) func(*verdict.Level) (float64, bool) {
	return func(l *verdict.Level) (float64, bool) { return get(l.Throughput), l.Throughput.N > 0 }
}

// columnsOf are the columns a scenario's tables show at the percentiles ps:
// those it has figures for, per-round ones included only when perRound.
func columnsOf(ps []float64, s *verdict.Scenario, perRound bool) []levelColumn {
	var out []levelColumn
	for _, c := range levelColumnsAt(ps) {
		if (c.Only == nil || c.Only(s)) && (perRound || !c.PerRound) {
			out = append(out, c)
		}
	}
	return out
}

// parts is a column's cell at one level as text and marked numbers: its
// shown figures placed by its Layout. A level without the column's first
// figure shows "-".
func (c levelColumn) parts(scenario string, l *verdict.Level) []hPart {
	var nums []hPart
	for _, f := range c.Figures {
		if f.Field == "" {
			continue
		}
		raw, ok := f.Of(l)
		if !ok {
			return []hPart{txt("-")}
		}
		text, _, _ := f.shown(l)
		// data-value is the figure as verdict.json has it, unscaled.
		nums = append(nums, num(f.Field, scenario, l.Level, 0, raw, text))
	}
	layout := c.Layout
	if layout == "" {
		layout = strings.Repeat("/%s", len(nums))[1:]
	}
	var out []hPart
	for i, lit := range strings.Split(layout, "%s") {
		if lit = strings.ReplaceAll(lit, "%%", "%"); lit != "" {
			out = append(out, hPart{Text: lit, Break: strings.HasSuffix(lit, "/")})
		}
		if i < len(nums) {
			out = append(out, nums[i])
		}
	}
	return out
}

// text is a column's cell as plain text.
func (c levelColumn) text(l *verdict.Level) string {
	var b strings.Builder
	for _, p := range c.parts("", l) {
		b.WriteString(p.Text)
	}
	return b.String()
}

// launchThroughput is the per-round column's cell for round k: the launch's
// throughput, or "-" when no launch of that round measured the level.
func launchThroughput(scenario string, l *verdict.Level, k int) (hPart, bool) {
	for _, ll := range l.Launches {
		if ll.Round == k {
			return num(roundFigure.Field, scenario, l.Level, k, ll.Throughput, strconv.FormatFloat(ll.Throughput, 'f', roundFigure.Digits, 64)), true
		}
	}
	return txt("-"), false
}

// roundsOf is the highest round any of the scenario's levels has a launch
// of: the per-round column's count.
func roundsOf(s *verdict.Scenario) int {
	n := 0
	for _, l := range s.Levels {
		for _, ll := range l.Launches {
			n = max(n, ll.Round)
		}
	}
	return n
}

// csvFigures are the per-level figures summary.csv has at the percentiles
// ps, in its order.
func csvFigures(ps []float64) []figure {
	var out []figure
	for _, c := range levelColumnsAt(ps) {
		for _, f := range c.Figures {
			if f.CSV != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// figureByField is the per-level figure the HTML page names field, at the
// percentiles ps; ok is false for one that is not a per-level figure.
func figureByField(ps []float64, field string) (figure, bool) {
	for _, c := range levelColumnsAt(ps) {
		for _, f := range c.Figures {
			if f.Field == field && field != "" {
				return f, true
			}
		}
	}
	return figure{}, false
}

// detailHead is a column's title, a per-round one for round k.
func (c levelColumn) head(k int) string {
	if c.PerRound {
		return fmt.Sprintf(c.Head, k)
	}
	return c.Head
}
