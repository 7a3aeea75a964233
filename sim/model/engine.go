package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

const (
	// decodeLogInterval is SGLang's default --decode-log-interval: the decode
	// log line, the metric gauges and the server info's accept length are
	// refreshed every this many decode steps.
	decodeLogInterval = 40
	// maxClockLag is how far (wall time) the engine may fall behind its
	// simulated schedule and still catch up (running late steps without
	// sleeping), so that a briefly starved process on a busy machine keeps
	// its throughput; beyond it the time is given up, and a long-starved
	// process is simply a slower server.
	maxClockLag = 5 * time.Second
)

// Delivery is what a waiting request receives after each step it was in.
type Delivery struct {
	Tokens int
	Done   bool
	At     time.Time // wall time the step ended
	// Send is false for a decode step between two stream intervals: its
	// tokens wait for the next step that sends (SGLang streams a request's
	// output when decode steps % stream_interval == 0, on its first token
	// and when it finishes).
	Send bool
}

// ticket is a request's registration with the engine.
type ticket struct {
	job *Job
	ch  chan Delivery
}

// Engine runs the Scheduler in wall time: each step sleeps its simulated
// duration divided by the speed, then hands its tokens to the requests.
type Engine struct {
	perf   Perf
	speed  float64
	launch *Launch    // nil without launch noise
	host   *HostDrift // nil unless the drift is the host's
	log    *sglog.Logger
	stats  *Stats
	now    func() time.Time

	mu      sync.Mutex
	sched   *Scheduler
	tickets map[*Job]*ticket
	nextID  uint64
	wake    chan struct{}
	// streamInterval and decodes (decode steps so far) decide which
	// deliveries are sent (Delivery.Send).
	streamInterval int
	decodes        int

	// busy is the wall time, ns, the engine has spent stepping (not idle):
	// what the fake nvidia-smi's utilisation and power are made of.
	busy atomic.Int64
}

// Busy is the wall time the engine has spent stepping since it started.
func (e *Engine) Busy() time.Duration { return time.Duration(e.busy.Load()) }

// NewEngine builds the engine for cfg; launch (nil for none) scales every
// step by the launch's factor and drift at the simulated time since Run began,
// host (nil for none) by the host's drift at the wall clock times the speed.
func NewEngine(cfg *cmdline.Config, log *sglog.Logger, stats *Stats, seed uint64, launch *Launch, host *HostDrift, now func() time.Time) *Engine {
	perf := NewPerf(cfg)
	maxRun, _ := cfg.RunningCap()
	e := &Engine{
		perf:    perf,
		speed:   cfg.Sim.Speed,
		launch:  launch,
		host:    host,
		log:     log,
		stats:   stats,
		now:     now,
		sched:   NewScheduler(perf, maxRun, cfg.ChunkedPrefillSize, rand.New(rand.NewPCG(seed, seed^0xe1e1))),
		tickets: map[*Job]*ticket{},
		wake:    make(chan struct{}, 1),

		streamInterval: max(1, cfg.StreamInterval),
	}
	if cfg.CacheOn() {
		e.sched.UseCache(NewPrefixCache(cfg.TotalTokens(), cfg.CachePage()))
	}
	return e
}

// Submit queues a request (PromptTokens, Target, and Prompt and Sequence for
// the prefix cache) and returns the job, the channel its deliveries arrive
// on, and a cancel function.
func (e *Engine) Submit(req Job) (*Job, <-chan Delivery, func()) {
	e.mu.Lock()
	e.nextID++
	j := &Job{ID: e.nextID, PromptTokens: req.PromptTokens, Target: max(1, req.Target),
		Prompt: req.Prompt, Sequence: req.Sequence}
	t := &ticket{job: j, ch: make(chan Delivery, j.Target+1)}
	e.tickets[j] = t
	e.sched.Add(j)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	cancel := func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, ok := e.tickets[j]; ok {
			e.sched.Cancel(j)
			delete(e.tickets, j)
		}
	}
	return j, t.ch, cancel
}

// FlushCache empties the prefix cache, as SGLang's scheduler does for
// /flush_cache, and returns "" or, while any request is queued or running,
// SGLang's refusal without flushing (python/sglang/srt/managers/
// scheduler.py, _can_flush_cache; the sim has no other pending state).
// Without a cache there is nothing to refuse: it succeeds, as it always did.
func (e *Engine) FlushCache() (refusal string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sched.cache == nil {
		return ""
	}
	if len(e.tickets) > 0 {
		return fmt.Sprintf("Cache not flushed because there are pending requests. "+
			"waiting=%d, pending_dp=0, running=%d, cur_batch=0, last_batch=0, chunked=False, "+
			"pending_results=0, pd_prefill=0, pd_prealloc=0, pd_transfer=0", e.sched.Waiting(), e.sched.Running())
	}
	e.sched.FlushCache()
	return ""
}

// Run steps the scheduler until ctx ends.
func (e *Engine) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	anchor := e.now()
	began := anchor            // the launch's drift runs in simulated time since then, idle time included
	var simSince time.Duration // simulated time since anchor
	win := newDecodeWindow()
	for {
		stepStart := e.now()
		e.mu.Lock()
		r := e.sched.Step()
		t := e.now()
		r.Duration = e.launch.Scale(r.Duration, time.Duration(float64(t.Sub(began))*e.speed))
		if e.host != nil {
			r.Duration = time.Duration(float64(r.Duration) * math.Exp(e.host.At(float64(t.UnixNano())/1e9*e.speed)))
		}
		running, waiting, kv := e.sched.Running(), e.sched.Waiting(), e.sched.KVTokens()
		e.mu.Unlock()
		if r.Kind == StepIdle {
			select {
			case <-ctx.Done():
				return
			case <-e.wake:
			}
			anchor, simSince = e.now(), 0
			continue
		}
		simSince += r.Duration
		deadline := anchor.Add(time.Duration(float64(simSince) / e.speed))
		if lag := e.now().Sub(deadline); lag > maxClockLag {
			anchor, simSince = e.now(), 0
		} else if lag < 0 {
			timer.Reset(-lag)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		end := e.now()
		// Busy is the wall time from a step's start to its end, sleep
		// included: steps run back to back while there is work, so this is
		// all the time the engine is not idle, however late a starved
		// process wakes.
		e.busy.Add(int64(end.Sub(stepStart)))
		e.deliver(r, end)
		e.stats.Step(r, running, waiting, kv)
		if r.Notice != "" {
			e.log.Rankf(0, "%s", r.Notice)
		}
		if r.Kind == StepPrefill {
			if e.perf.decodeOnly {
				continue // a decode worker admits transferred requests without a forward
			}
			e.log.Rankf(0, "Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d",
				r.Batch, r.NewTokens, r.CachedTokens, e.stats.TokenUsage(), running-(len(r.Emits)-countDone(r)), waiting)
			continue
		}
		if w, ok := win.add(r, end); ok {
			e.stats.Window(w)
			line := "Decode batch, #running-req: %d, #token: %d, token usage: %.2f, "
			args := []any{r.Batch, e.stats.KVTokens(), e.stats.TokenUsage()}
			if e.perf.Speculative() {
				line += "accept len: %.2f, accept rate: %.2f, "
				args = append(args, w.acceptLen, w.acceptRate(e.perf.steps))
			}
			line += "cuda graph: %s, gen throughput (token/s): %.2f, #queue-req: %d"
			args = append(args, cmdline.PyBool(r.Graph), w.throughput, waiting)
			e.log.Rankf(0, line, args...)
		}
	}
}

func countDone(r StepResult) int {
	n := 0
	for _, em := range r.Emits {
		if em.Done {
			n++
		}
	}
	return n
}

func (e *Engine) deliver(r StepResult, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	send := true
	if r.Kind == StepDecode {
		e.decodes++
		send = e.decodes%e.streamInterval == 0
	}
	for _, em := range r.Emits {
		t, ok := e.tickets[em.Job]
		if !ok {
			continue // canceled meanwhile
		}
		t.ch <- Delivery{Tokens: em.Tokens, Done: em.Done, At: at, Send: send}
		if em.Done {
			delete(e.tickets, em.Job)
		}
	}
}

// decodeWindow accumulates decode steps until a log interval is full.
type decodeWindow struct {
	steps     int
	tokens    int
	acceptSum int
	acceptN   int
	start     time.Time
}

// windowStats are the figures of one full window.
type windowStats struct {
	throughput float64 // tokens per wall second
	acceptLen  float64
	acceptSum  int
	acceptN    int
}

func (w windowStats) acceptRate(steps int) float64 {
	if steps <= 0 {
		return 0
	}
	return (w.acceptLen - 1) / float64(steps)
}

func newDecodeWindow() *decodeWindow { return &decodeWindow{} }

func (w *decodeWindow) add(r StepResult, end time.Time) (windowStats, bool) {
	if w.start.IsZero() {
		w.start = end.Add(-time.Millisecond) // never a zero-length window
	}
	w.steps++
	for _, em := range r.Emits {
		w.tokens += em.Tokens
	}
	w.acceptSum += r.AcceptSum
	w.acceptN += r.AcceptN
	if w.steps < decodeLogInterval {
		return windowStats{}, false
	}
	s := windowStats{
		throughput: float64(w.tokens) / end.Sub(w.start).Seconds(),
		acceptLen:  float64(w.acceptSum) / float64(max(1, w.acceptN)),
		acceptSum:  w.acceptSum,
		acceptN:    w.acceptN,
	}
	// The next window starts where this one ended, idle time included, as
	// SGLang's gen throughput does.
	*w = decodeWindow{start: end}
	return s, true
}
