package model

import (
	"sync"
	"time"
)

// Histogram bucket bounds in seconds, as SGLang's metrics collector uses.
var (
	ttftBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 120, 160}
	itlBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040,
		0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0}
	e2eBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800}
)

// Histogram is a Prometheus Histogram: cumulative counts per upper bound.
type Histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative; len(bounds)+1 with +Inf last
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *Histogram) observe(v float64, times int) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i] += uint64(times)
	h.sum += v * float64(times)
	h.n += uint64(times)
}

// Stats holds the server's metrics: live load, the windowed gauges SGLang
// refreshes every decode log interval, counters and latency histograms.
type Stats struct {
	mu sync.Mutex

	running, queued int
	kvTokens        int
	pool            int // KV pool in tokens, token usage's denominator
	// Windowed gauges, kept when idle.
	genThroughput float64
	acceptLen     float64
	acceptRate    float64
	// Cumulative accept length, refreshed per window (it lags, as SGLang's).
	acceptSum, acceptN int
	steps              int // spec steps, for the rate

	promptTokens, genTokens, requests uint64
	// cachedTokens and verifySteps add every finished request's cached
	// prompt tokens and verify steps (sglang:cached_tokens_total,
	// sglang:spec_verify_calls_total); cacheHitRate is the last prefill
	// batch's share of cached prompt tokens (sglang:cache_hit_rate).
	cachedTokens, verifySteps uint64
	cacheHitRate              float64
	ttft, itl, e2e            *Histogram
}

// Snapshot is the metrics at one moment, copied out for an exposition to
// render (the server's /metrics writes them as SGLang's collector does).
type Snapshot struct {
	Running, Queued, KVTokens, Pool                    int
	GenThroughput, AcceptLen, AcceptRate, CacheHitRate float64
	PromptTokens, GenTokens, Requests                  uint64
	CachedTokens, VerifySteps                          uint64
	TTFT, ITL, E2E                                     HistogramSnapshot
}

// HistogramSnapshot is a histogram's buckets at one moment: Counts per
// bucket, not cumulative, one more than Bounds (+Inf last).
type HistogramSnapshot struct {
	Bounds []float64
	Counts []uint64
	Sum    float64
	N      uint64
}

func (h *Histogram) snapshot() HistogramSnapshot {
	return HistogramSnapshot{Bounds: h.bounds, Counts: append([]uint64(nil), h.counts...), Sum: h.sum, N: h.n}
}

// Snapshot copies the metrics out under the lock.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{
		Running: s.running, Queued: s.queued, KVTokens: s.kvTokens, Pool: s.pool,
		GenThroughput: s.genThroughput, AcceptLen: s.acceptLen, AcceptRate: s.acceptRate, CacheHitRate: s.cacheHitRate,
		PromptTokens: s.promptTokens, GenTokens: s.genTokens, Requests: s.requests,
		CachedTokens: s.cachedTokens, VerifySteps: s.verifySteps,
		TTFT: s.ttft.snapshot(), ITL: s.itl.snapshot(), E2E: s.e2e.snapshot(),
	}
}

// NewStats returns empty metrics; steps is the speculative step count (0
// without speculation), pool the KV pool in tokens.
func NewStats(steps, pool int) *Stats {
	return &Stats{steps: steps, pool: max(1, pool), ttft: newHistogram(ttftBuckets), itl: newHistogram(itlBuckets), e2e: newHistogram(e2eBuckets)}
}

// Step records the load after a scheduler step.
func (s *Stats) Step(r StepResult, running, queued, kvTokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running, s.queued, s.kvTokens = running, queued, kvTokens
	for _, em := range r.Emits {
		s.genTokens += uint64(em.Tokens)
	}
	// As SGLang's prompt_tokens_total: every prompt token, cached or not.
	s.promptTokens += uint64(r.NewTokens + r.CachedTokens)
	if r.Kind == StepPrefill {
		s.cacheHitRate = float64(r.CachedTokens) / float64(max(1, r.NewTokens+r.CachedTokens))
	}
}

// Window records one full decode log interval.
func (s *Stats) Window(w windowStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.genThroughput = w.throughput
	s.acceptLen = w.acceptLen
	s.acceptRate = w.acceptRate(s.steps)
	s.acceptSum += w.acceptSum
	s.acceptN += w.acceptN
}

// Finished records a completed request: its time to first token, its
// inter-token gaps (a chunk's gap spread over its tokens), its latency, and
// its cached prompt tokens and verify steps.
func (s *Stats) Finished(ttft, e2e time.Duration, gaps []TokenGap, job *Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.cachedTokens += uint64(job.Cached)
	s.verifySteps += uint64(job.Spec.VerifySteps)
	s.ttft.observe(ttft.Seconds(), 1)
	s.e2e.observe(e2e.Seconds(), 1)
	for _, g := range gaps {
		s.itl.observe(g.Gap.Seconds()/float64(g.Tokens), g.Tokens)
	}
}

// TokenGap is the wall time between two chunks and the tokens the later one carried.
type TokenGap struct {
	Gap    time.Duration
	Tokens int
}

// TokenUsage is the fraction of the KV cache in use.
func (s *Stats) TokenUsage() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.kvTokens) / float64(s.pool)
}

// KVTokens is the tokens held by the running batch.
func (s *Stats) KVTokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kvTokens
}

// AvgAcceptLength is the accept length over the server's life, as of the
// last full decode log interval; 0 before the first.
func (s *Stats) AvgAcceptLength() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acceptN == 0 {
		return 0
	}
	return float64(s.acceptSum) / float64(s.acceptN)
}

// GenThroughput is the last window's generation throughput (tokens per wall second).
func (s *Stats) GenThroughput() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.genThroughput
}
