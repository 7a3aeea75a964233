package model

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Job is one request inside the scheduler.
type Job struct {
	ID           uint64
	PromptTokens int
	// Target is how many tokens the request will generate: max_tokens, or
	// fewer when the text reaches its end of sequence first.
	Target    int
	Generated int
	// VerifySteps counts the decode steps the request took part in, as
	// SGLang's spec_verify_ct (accept length = Generated / VerifySteps).
	VerifySteps int
	// Spec are the request's speculative counts (spec.go); Spec.VerifySteps
	// equals VerifySteps.
	Spec SpecCounts

	// Prompt is the prompt as token ids, for the prefix cache; nil leaves
	// the cache out (the virtual runs).
	Prompt []int32
	// Sequence returns the ids the cache keeps once the request has
	// generated n tokens: the prompt and the output as a next turn would
	// send them back. Nil keeps the prompt alone.
	Sequence func(n int) []int32
	// Cached is the prompt tokens found in the prefix cache when the
	// request was prefilled (SGLang's cached_tokens).
	Cached int

	node     *radixNode // the cache node the running request holds
	canceled bool
}

// StepKind tells a prefill step from a decode step.
type StepKind int

// Step kinds.
const (
	StepIdle StepKind = iota
	StepPrefill
	StepDecode
)

// Emit is what one job got from one step.
type Emit struct {
	Job    *Job
	Tokens int
	Done   bool
}

// StepResult is one scheduler step: its simulated duration and its output,
// which becomes visible when the step ends.
type StepResult struct {
	Kind     StepKind
	Duration time.Duration // simulated, noise included
	Batch    int           // requests in the step
	Emits    []Emit
	// Steps is the speculative steps a decode step drafted (the adaptive
	// controller's choice, else the configured steps).
	Steps int
	// Notice is a line the scheduler logs after the step ("" for none):
	// the adaptive controller's change of steps.
	Notice string
	// NewTokens is the prompt tokens prefilled (prefill steps), and
	// CachedTokens the prompt tokens the prefix cache spared them.
	NewTokens, CachedTokens int
	// AcceptSum and AcceptN sum the accept lengths drawn (decode steps).
	AcceptSum, AcceptN int
	Queued             int  // requests still waiting after the step
	Graph              bool // the step ran as a captured cuda graph
}

// Scheduler is SGLang's continuous batching in miniature: a waiting queue,
// a running batch capped at maxRunning, prefill first (bounded by the
// chunked-prefill size), otherwise one decode step over every running
// request. It is pure: the caller owns the clock.
type Scheduler struct {
	perf       Perf
	maxRunning int
	maxPrefill int
	rng        *rand.Rand
	waiting    []*Job
	running    []*Job
	// cache is the prefix cache; nil when it is off (--disable-radix-cache).
	cache *PrefixCache
	// maxAccepted is the most draft tokens one verify step can accept (the
	// speculative steps, the most of the adaptive candidates), 0 without
	// speculation.
	maxAccepted int
	// adaptive chooses each round's steps (nil: the configured steps).
	adaptive *adaptiveSteps
}

// NewScheduler returns a scheduler for the model with a running cap and a
// per-prefill token budget, drawing noise and accept lengths from rng.
func NewScheduler(perf Perf, maxRunning, maxPrefillTokens int, rng *rand.Rand) *Scheduler {
	s := &Scheduler{perf: perf, maxRunning: max(1, maxRunning), maxPrefill: max(1, maxPrefillTokens), rng: rng}
	if perf.Speculative() {
		s.maxAccepted = perf.steps
		if perf.plan != nil {
			s.adaptive = newAdaptiveSteps(perf)
			s.maxAccepted = slices.Max(perf.plan.Candidates())
		}
	}
	return s
}

// UseCache gives the scheduler a prefix cache (nil: none).
func (s *Scheduler) UseCache(c *PrefixCache) { s.cache = c }

// FlushCache empties the prefix cache, if there is one.
func (s *Scheduler) FlushCache() {
	if s.cache != nil {
		s.cache.Reset()
	}
}

// Add queues a job.
func (s *Scheduler) Add(j *Job) { s.waiting = append(s.waiting, j) }

// Cancel drops a job at the next step (its client went away).
func (s *Scheduler) Cancel(j *Job) { j.canceled = true }

// Running is the number of requests in the running batch.
func (s *Scheduler) Running() int { return len(s.running) }

// Waiting is the number of queued requests.
func (s *Scheduler) Waiting() int { return len(s.waiting) }

// Idle reports whether there is nothing to do.
func (s *Scheduler) Idle() bool { return len(s.waiting) == 0 && len(s.running) == 0 }

// dropCanceled removes the jobs whose clients went away, releasing what
// they held in the cache.
func (s *Scheduler) dropCanceled(js []*Job) []*Job {
	out := js[:0]
	for _, j := range js {
		if !j.canceled {
			out = append(out, j)
		} else if j.node != nil {
			s.cache.release(j.node)
			j.node = nil
		}
	}
	return out
}

// cached is how many of j's prompt tokens the cache holds: whole pages, and
// never the last prompt token, which SGLang always computes.
func (s *Scheduler) cached(j *Job) int {
	if s.cache == nil || j.Prompt == nil {
		return 0
	}
	n, _ := s.cache.Match(j.Prompt, min(len(j.Prompt), j.PromptTokens)-1)
	return n
}

// admitted caches a prefilled prompt and holds it while j runs (SGLang's
// cache_unfinished_req).
func (s *Scheduler) admitted(j *Job) {
	if s.cache == nil || j.Prompt == nil {
		return
	}
	j.node = s.cache.Insert(j.Prompt)
	s.cache.hold(j.node)
}

// finished releases j's prompt and caches what it generated with it
// (SGLang's cache_finished_req).
func (s *Scheduler) finished(j *Job) {
	if j.node == nil {
		return
	}
	s.cache.release(j.node)
	j.node = nil
	seq := j.Prompt
	if j.Sequence != nil {
		seq = j.Sequence(j.Generated)
	}
	s.cache.Insert(seq)
}

// Step runs one step and returns it; StepIdle with zero duration when idle.
func (s *Scheduler) Step() StepResult {
	s.waiting = s.dropCanceled(s.waiting)
	s.running = s.dropCanceled(s.running)
	if len(s.waiting) > 0 && len(s.running) < s.maxRunning {
		return s.prefill()
	}
	if len(s.running) > 0 {
		return s.decode()
	}
	return StepResult{Kind: StepIdle}
}

func (s *Scheduler) prefill() StepResult {
	r := StepResult{Kind: StepPrefill, Graph: false}
	n := 0
	// Every prompt of the batch is matched before any is cached, so two
	// requests of one batch with the same prompt both compute it.
	for n < len(s.waiting) && len(s.running)+n < s.maxRunning {
		j := s.waiting[n]
		j.Cached = s.cached(j)
		t := j.PromptTokens - j.Cached
		if n > 0 && r.NewTokens+t > s.maxPrefill {
			break
		}
		r.NewTokens += t
		r.CachedTokens += j.Cached
		n++
	}
	admitted := s.waiting[:n]
	s.waiting = append([]*Job(nil), s.waiting[n:]...)
	for _, j := range admitted {
		s.admitted(j)
		// Prefill samples each request's first token.
		j.Generated = 1
		done := j.Generated >= j.Target
		r.Emits = append(r.Emits, Emit{Job: j, Tokens: 1, Done: done})
		if done {
			s.finished(j)
		} else {
			s.running = append(s.running, j)
		}
	}
	r.Batch = n
	r.Duration = s.perf.Noisy(s.perf.PrefillStep(r.NewTokens), s.rng)
	r.Queued = len(s.waiting)
	return r
}

func (s *Scheduler) decode() StepResult {
	b := len(s.running)
	steps := s.perf.steps
	if s.adaptive != nil {
		steps = s.adaptive.steps(b)
	}
	r := StepResult{Kind: StepDecode, Batch: b, Graph: b <= s.perf.graphMaxBS, Steps: steps}
	r.Duration = s.perf.Noisy(s.perf.decodeStepAt(b, steps), s.rng)
	var correct []int
	keep := s.running[:0]
	for _, j := range s.running {
		a := s.perf.drawAcceptAt(steps, s.rng)
		if s.adaptive != nil {
			correct = append(correct, a-1)
		}
		r.AcceptSum += a
		r.AcceptN++
		n := min(a, j.Target-j.Generated)
		j.Generated += n
		j.VerifySteps++
		j.Spec.step(n, s.maxAccepted)
		done := j.Generated >= j.Target
		r.Emits = append(r.Emits, Emit{Job: j, Tokens: n, Done: done})
		if done {
			s.finished(j)
		} else {
			keep = append(keep, j)
		}
	}
	s.running = keep
	r.Queued = len(s.waiting)
	if s.adaptive != nil {
		r.Notice = s.adaptive.verified(b, correct)
	}
	return r
}

// KVTokens is the tokens the running batch holds in the KV cache.
func (s *Scheduler) KVTokens() int {
	n := 0
	for _, j := range s.running {
		n += j.PromptTokens + j.Generated
	}
	return n
}
