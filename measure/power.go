package measure

import (
	"fmt"
	"math"
	"slices"
)

// Power integration limits.
const (
	// MinPowerCoverage is the share of a window the power readings must
	// span (first to last reading of every counted GPU) before its energy
	// is reported: an edge or two may be missing, a quarter of the window
	// may not.
	MinPowerCoverage = 0.9
	// MaxPowerGap is the longest gap between two readings of one GPU that
	// is bridged by interpolation, in ns; a longer gap (a stalled sampler)
	// leaves the window without energy rather than guessing across it.
	MaxPowerGap = int64(5e9)
)

// PowerSample is one reading of one GPU's meters, as the sampler on the
// host took it.
type PowerSample struct {
	TimeNs int64 `json:"t_ns"` // host clock, Unix ns
	GPU    int   `json:"gpu"`  // index as nvidia-smi numbers it
	// PowerW is the board's power draw, watts; -1 where the board reports
	// none ([N/A], [Not Supported]).
	PowerW float64 `json:"power_w"`
	// UtilPct is the share of the last sample period in which a kernel ran,
	// percent; -1 where not reported.
	UtilPct float64 `json:"util_pct"`
	MemMiB  int     `json:"mem_mib"` // memory used; -1 where not reported
	SMMHz   int     `json:"sm_mhz"`  // SM clock; -1 where not reported
}

// PowerLog is one launch's power readings (power.json): the GPUs that
// count, and every reading of every GPU, in time order.
type PowerLog struct {
	// Source is the tool that read the meters: "nvidia-smi" or "dcgm".
	Source string `json:"source"`
	// IntervalMs is the sampling interval asked for, milliseconds.
	IntervalMs int `json:"interval_ms"`
	// GPUs are the indices of the GPUs the scenario used, ascending; only
	// they are summed. GPUsFrom says how they were found.
	GPUs     []int  `json:"gpus"`
	GPUsFrom string `json:"gpus_from"`
	// Unavailable says why no energy can be computed from this log (the
	// board reports no power, no reading was taken); "" when it can.
	Unavailable string        `json:"unavailable,omitempty"`
	Samples     []PowerSample `json:"samples"`
	// Host names the node the readings are of, in a log of a deployment
	// over several nodes; "" for one host.
	Host string `json:"host,omitempty"`
	// Nodes are the other nodes' logs of a deployment over several, each
	// with its own GPUs and Host: a launch's energy is all of its GPUs',
	// wherever they are. Each node's readings are timed by its own clock,
	// the windows by the sweep's host's: nodes of one cluster agree to
	// within milliseconds, far inside a level.
	Nodes []PowerLog `json:"nodes,omitempty"`
}

// Energy is the GPU energy over one window, summed over the counted GPUs.
type Energy struct {
	MeanW  float64 // mean power, watts
	Joules float64 // MeanW × the window's length
}

// PerKTokens is the energy per 1000 output tokens, joules, for tokens
// produced in the same window; 0 when there are none.
func (e Energy) PerKTokens(tokens float64) float64 {
	if tokens <= 0 {
		return 0
	}
	return e.Joules / tokens * 1000
}

// Energy integrates the counted GPUs' power over w: per GPU, the readings
// are joined by straight lines (trapezoids) and the mean is taken over the
// part of w they span, which must be at least MinPowerCoverage of it with no
// gap longer than MaxPowerGap; the GPUs' means are summed, over every node
// of a deployment over several (Nodes). It returns an error saying why when
// the log cannot give w's energy.
func (p PowerLog) Energy(w Window) (Energy, error) {
	e, err := p.nodeEnergy(w)
	if err != nil {
		return Energy{}, err
	}
	// A node without readings leaves no energy at all: the sum of the
	// others' would read as the whole deployment's.
	for _, n := range p.Nodes {
		ne, err := n.nodeEnergy(w)
		if err != nil {
			return Energy{}, fmt.Errorf("node %s: %w", n.Host, err)
		}
		e.MeanW += ne.MeanW
		e.Joules += ne.Joules
	}
	return e, nil
}

// nodeEnergy is Energy over this log's own GPUs, its Nodes left out.
func (p PowerLog) nodeEnergy(w Window) (Energy, error) {
	if p.Unavailable != "" {
		return Energy{}, fmt.Errorf("no power readings: %s", p.Unavailable)
	}
	if w.End <= w.Start {
		return Energy{}, fmt.Errorf("empty window")
	}
	if len(p.GPUs) == 0 {
		return Energy{}, fmt.Errorf("no GPU to count")
	}
	byGPU := map[int][]PowerSample{}
	for _, s := range p.Samples {
		if s.PowerW >= 0 && slices.Contains(p.GPUs, s.GPU) {
			byGPU[s.GPU] = append(byGPU[s.GPU], s)
		}
	}
	var e Energy
	for _, g := range p.GPUs {
		mean, err := meanPower(byGPU[g], w)
		if err != nil {
			return Energy{}, fmt.Errorf("GPU %d: %w", g, err)
		}
		e.MeanW += mean
	}
	e.Joules = e.MeanW * w.Seconds()
	return e, nil
}

// meanPower is one GPU's mean power over the part of w its readings span.
func meanPower(ss []PowerSample, w Window) (float64, error) {
	slices.SortStableFunc(ss, func(a, b PowerSample) int {
		switch {
		case a.TimeNs < b.TimeNs:
			return -1
		case a.TimeNs > b.TimeNs:
			return 1
		}
		return 0
	})
	if len(ss) == 0 {
		return 0, fmt.Errorf("no power reading")
	}
	// One reading inside or next to a short window stands for all of it.
	if len(ss) == 1 {
		if ss[0].TimeNs >= w.Start-MaxPowerGap && ss[0].TimeNs <= w.End+MaxPowerGap {
			return ss[0].PowerW, nil
		}
		return 0, fmt.Errorf("no power reading near the window")
	}
	var area float64 // W·ns
	var covered int64
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		lo, hi := max(a.TimeNs, w.Start), min(b.TimeNs, w.End)
		if hi <= lo {
			continue
		}
		if b.TimeNs-a.TimeNs > MaxPowerGap {
			return 0, fmt.Errorf("readings %.1f s apart inside the window", float64(b.TimeNs-a.TimeNs)/1e9)
		}
		at := func(t int64) float64 {
			return a.PowerW + (b.PowerW-a.PowerW)*float64(t-a.TimeNs)/float64(b.TimeNs-a.TimeNs)
		}
		area += (at(lo) + at(hi)) / 2 * float64(hi-lo)
		covered += hi - lo
	}
	span := w.End - w.Start
	if float64(covered) < MinPowerCoverage*float64(span) {
		// A window shorter than the interval may fall between two readings
		// only; the interpolation above covers it, so this is a real hole.
		return 0, fmt.Errorf("readings span %.0f%% of the window, under %.0f%%", 100*float64(covered)/float64(span), 100*MinPowerCoverage)
	}
	m := area / float64(covered)
	if math.IsNaN(m) || math.IsInf(m, 0) {
		return 0, fmt.Errorf("bad power readings")
	}
	return m, nil
}

// SetEnergy fills s's PowerW and JoulesPerKTok from p over s's steady-state
// window (the wall window where it had none), with the tokens its
// throughput counted there.
func (s *LevelSummary) SetEnergy(p PowerLog) error {
	w := Window{s.SteadyStartNs, s.SteadyEndNs}
	e, err := p.Energy(w)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Level, err)
	}
	s.PowerW = e.MeanW
	s.JoulesPerKTok = e.PerKTokens(s.Throughput * w.Seconds())
	return nil
}
