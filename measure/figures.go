package measure

import (
	"cmp"
	"slices"
)

// Counts are a level's request counts, as Figures and LevelSummary both
// give them (flat in JSON).
type Counts struct {
	// Requests counts measured (non-warm-up) requests; OK and Failed split
	// them; FailedByClass counts failures by error class (nil when none).
	Requests      int            `json:"requests"`
	OK            int            `json:"ok"`
	Failed        int            `json:"failed"`
	FailedByClass map[string]int `json:"failed_by_class,omitempty"`
	Tokens        int            `json:"tokens"` // completion tokens of successful requests
	// ConnRetries counts requests sent again on a new connection because
	// the server had closed a kept-alive one (Record.ConnRetries);
	// TokensEstimated is true when any token count was estimated because
	// the server sent no usage.
	ConnRetries     int  `json:"conn_retries,omitempty"`
	TokensEstimated bool `json:"tokens_estimated,omitempty"`
}

// Figures are one level's figures over one or more of its repeats: the
// request counts, the per-request distributions (docs/METHOD.md, Per-request
// figures) and the throughput over the repeats' steady-state windows. They
// are made in one place, LevelFigures, so that the live sweep's line and
// levels.json (one repeat, Summarize) and the verdict, report and diff (every
// repeat of every launch) cannot disagree on the same records.
type Figures struct {
	Counts

	// SteadyThroughput is the completion tokens produced inside each
	// repeat's throughput window (the steady state, else the wall window:
	// LevelThroughput's) over the windows' summed length, tok/s;
	// SteadySeconds is that summed length.
	SteadyThroughput float64 `json:"steady_throughput"`
	SteadySeconds    float64 `json:"steady_s"`
	// WallThroughput is the successful requests' tokens over the summed
	// wall windows (first send to last end of each repeat), tok/s.
	WallThroughput float64 `json:"wall_throughput"`
	// AchievedConcurrency is the time-weighted mean of requests in flight
	// over the throughput windows.
	AchievedConcurrency float64 `json:"achieved_concurrency"`

	// PerRequest is the distribution of tokens/latency over the successful
	// requests, tok/s. Latency, TTFT and TPOT are per-request
	// distributions in seconds: latency over every successful request,
	// TTFT over those with a first chunk, TPOT over those with a first
	// chunk and two tokens or more (Record.TTFT, TPOT).
	PerRequest Dist `json:"per_request_tok_s"`
	Latency    Dist `json:"latency_s"`
	TTFT       Dist `json:"ttft_s"`
	TPOT       Dist `json:"tpot_s"`
	// ITL is the distribution of every inter-token gap (Record.ITL) of
	// every successful request inside the steady state (SteadyITL), pooled,
	// seconds; N is 0 when the records keep no gaps.
	ITL Dist `json:"itl_s"`
	// TTFTCDF and ITLCDF draw the TTFT and ITL distributions; nil when
	// there is nothing to draw.
	TTFTCDF *CDF `json:"ttft_cdf,omitempty"`
	ITLCDF  *CDF `json:"itl_cdf,omitempty"`
	// DispatchLagP99 is the p99 of the client's delay from a slot freeing
	// to the next send (Record.DispatchLagNs), seconds, over the requests
	// sent inside the steady-state window.
	DispatchLagP99 float64 `json:"dispatch_lag_p99_s"`
	// PaceShare is the share of the slots' time that the client held a
	// freed slot empty: the summed dispatch lag over the summed lag and
	// latency of the requests sent inside the steady state. In a closed
	// loop each slot alternates between a request in flight and the
	// client's lag before the next, so this is the part of the level's
	// throughput the client, not the server, took away (at most: a server
	// whose throughput does not grow with its batch loses less).
	PaceShare float64 `json:"pace_share,omitempty"`
}

// LevelFigures is LevelFiguresAt the default percentiles.
func LevelFigures(level Level, repeats ...[]Record) Figures {
	return LevelFiguresAt(level, DefaultPercentiles, repeats...)
}

// LevelFiguresAt makes the figures of one level from its repeats' records
// (each element one repeat's, warm-up left out), pooled over the repeats,
// with the latency distributions at the percentiles ps as well. The records
// may come in any order: each repeat is taken in send order, so the same
// records give the same figures to the last bit wherever they are read.
func LevelFiguresAt(level Level, ps []float64, repeats ...[]Record) Figures {
	var f Figures
	var perReq, lat, ttft, tpot, itl, lag []float64
	var steadyTok, busy, wallTok, wallSec float64
	var lagSum, slotSum float64 // seconds, for PaceShare
	for _, recs := range repeats {
		recs = inSendOrder(recs)
		w, steady := throughputWindow(level, recs)
		itl = append(itl, SteadyITL(level, recs)...)
		for _, r := range recs {
			f.Requests++
			f.ConnRetries += r.ConnRetries
			// The figures are over the steady state, the dispatch lag too:
			// the ramp-up's first sends (up to the C-th) follow no freed
			// slot and measure how fast the client starts its workers, not
			// how promptly it keeps the loop full.
			if !steady || r.SendNs > w.Start {
				lag = append(lag, float64(r.DispatchLagNs)/1e9)
			}
			if l, s, ok := paceOf(r, w, steady); ok {
				lagSum += l
				slotSum += s
			}
			if !r.OK() {
				f.Failed++
				if f.FailedByClass == nil {
					f.FailedByClass = map[string]int{}
				}
				f.FailedByClass[r.ErrClass]++
				continue
			}
			f.OK++
			f.Tokens += r.Tokens
			f.TokensEstimated = f.TokensEstimated || r.TokensEstimated
			l := r.Latency().Seconds()
			lat = append(lat, l)
			if l > 0 { // a zero latency has no speed
				perReq = append(perReq, float64(r.Tokens)/l)
			}
			if r.FirstNs != 0 {
				ttft = append(ttft, r.TTFT().Seconds())
			}
			if r.Tokens >= 2 && r.FirstNs != 0 {
				tpot = append(tpot, r.TPOT().Seconds())
			}
		}
		if sec := w.Seconds(); sec > 0 {
			steadyTok += TokensIn(recs, w)
			busy += InFlight(recs, w) * sec
			f.SteadySeconds += sec
		}
		wall, _ := WallWindow(recs)
		wallTok += float64(OKTokens(recs))
		wallSec += wall.Seconds()
	}
	if f.SteadySeconds > 0 {
		f.SteadyThroughput = steadyTok / f.SteadySeconds
		f.AchievedConcurrency = busy / f.SteadySeconds
	}
	if wallSec > 0 {
		f.WallThroughput = wallTok / wallSec
	}
	f.PerRequest = DistOf(perReq)
	f.Latency = DistAt(lat, ps)
	f.TTFT = DistAt(ttft, ps)
	f.TPOT = DistAt(tpot, ps)
	f.ITL = DistAt(itl, ps)
	f.TTFTCDF, f.ITLCDF = CDFOf(ttft), CDFOf(itl)
	f.DispatchLagP99 = Percentile(lag, 99)
	if slotSum > 0 {
		f.PaceShare = lagSum / slotSum
	}
	return f
}

// inSendOrder returns recs sorted by send time, then sequence number; recs
// itself when it already is.
func inSendOrder(recs []Record) []Record {
	bySend := func(a, b Record) int {
		return cmp.Or(cmp.Compare(a.SendNs, b.SendNs), cmp.Compare(a.Seq, b.Seq))
	}
	if slices.IsSortedFunc(recs, bySend) {
		return recs
	}
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, bySend)
	return recs
}

// PaceSums are the sums PaceShare is made of over one repeat's records,
// with w and steady its throughput window (Throughput.Window and .Steady):
// the client's dispatch lag and the slots' time (lag plus latency),
// seconds. Summed over some of a level's launches and divided, they give
// the PaceShare LevelFiguresAt gives over the same launches.
func PaceSums(recs []Record, w Window, steady bool) (lag, slot float64) {
	for _, r := range recs {
		if l, s, ok := paceOf(r, w, steady); ok {
			lag += l
			slot += s
		}
	}
	return lag, slot
}

// paceOf is one request's part of PaceSums: the ramp-up's first sends
// (before the steady window) follow no freed slot and are left out, as is
// a request that never ended.
func paceOf(r Record, w Window, steady bool) (lag, slot float64, ok bool) {
	if (steady && r.SendNs <= w.Start) || r.EndNs <= r.SendNs {
		return 0, 0, false
	}
	lag = float64(r.DispatchLagNs) / 1e9
	return lag, lag + r.Latency().Seconds(), true
}
