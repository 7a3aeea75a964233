package sim

import (
	"math/rand/v2"
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
	canceled    bool
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
	// NewTokens is the prompt tokens prefilled (prefill steps).
	NewTokens int
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
}

// NewScheduler returns a scheduler for the model with a running cap and a
// per-prefill token budget, drawing noise and accept lengths from rng.
func NewScheduler(perf Perf, maxRunning, maxPrefillTokens int, rng *rand.Rand) *Scheduler {
	return &Scheduler{perf: perf, maxRunning: max(1, maxRunning), maxPrefill: max(1, maxPrefillTokens), rng: rng}
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

func dropCanceled(js []*Job) []*Job {
	out := js[:0]
	for _, j := range js {
		if !j.canceled {
			out = append(out, j)
		}
	}
	return out
}

// Step runs one step and returns it; StepIdle with zero duration when idle.
func (s *Scheduler) Step() StepResult {
	s.waiting = dropCanceled(s.waiting)
	s.running = dropCanceled(s.running)
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
	for n < len(s.waiting) && len(s.running)+n < s.maxRunning {
		t := s.waiting[n].PromptTokens
		if n > 0 && r.NewTokens+t > s.maxPrefill {
			break
		}
		r.NewTokens += t
		n++
	}
	admitted := s.waiting[:n]
	s.waiting = append([]*Job(nil), s.waiting[n:]...)
	for _, j := range admitted {
		// Prefill samples each request's first token.
		j.Generated = 1
		done := j.Generated >= j.Target
		r.Emits = append(r.Emits, Emit{Job: j, Tokens: 1, Done: done})
		if !done {
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
	r := StepResult{Kind: StepDecode, Batch: b, Graph: b <= s.perf.graphMaxBS}
	r.Duration = s.perf.Noisy(s.perf.DecodeStep(b), s.rng)
	keep := s.running[:0]
	for _, j := range s.running {
		a := s.perf.DrawAccept(s.rng)
		r.AcceptSum += a
		r.AcceptN++
		n := min(a, j.Target-j.Generated)
		j.Generated += n
		j.VerifySteps++
		done := j.Generated >= j.Target
		r.Emits = append(r.Emits, Emit{Job: j, Tokens: n, Done: done})
		if !done {
			keep = append(keep, j)
		}
	}
	s.running = keep
	r.Queued = len(s.waiting)
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
