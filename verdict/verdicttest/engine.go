// Package verdicttest generates request records from a small model of a
// continuous-batching LLM server under a closed-loop sweep, so that the
// verdict's statistics can be tested on thousands of campaigns in seconds,
// with differences between variants that are known exactly.
//
// The model is deliberately the same shape as the simulated engine (package
// sim): a decode step whose time grows with the running batch, a prefill cost
// per prompt token, speculative steps that emit several tokens, multiplicative
// per-step noise, a per-launch speed factor and a slow drift that carries over
// between the launches of a Campaign. It runs in virtual time: no clock, no
// sleeping, no network.
package verdicttest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Engine is a server variant's performance model. Times are seconds of
// simulated (uncompressed) time.
type Engine struct {
	// StepBase is the decode step time with one sequence running, s.
	StepBase float64
	// StepPerSeq is added to the step time for every further running
	// sequence, s.
	StepPerSeq float64
	// PrefillPerToken is the prefill cost per prompt token, s.
	PrefillPerToken float64
	// AcceptLength is the mean tokens one sequence gains per step: 1 for
	// plain decoding, more under speculative decoding.
	AcceptLength float64
	// MaxRunning caps the running batch; further requests queue. 0 = no cap.
	MaxRunning int
	// Noise is the standard deviation of the per-step log-normal factor.
	Noise float64
	// LaunchSigma is the standard deviation of a log-normal speed factor
	// drawn once per launch and kept for the launch's whole life: what a
	// restart changes (memory layout, kernel autotuning, clocks at start).
	LaunchSigma float64
	// LaunchTailDF, above 2, draws the launch factor's log from Student's t
	// with that many degrees of freedom, scaled to LaunchSigma's standard
	// deviation: a launch now and then far off, as real ones are. 0 draws
	// it normal.
	LaunchTailDF float64
	// Drift is the standard deviation of a slow log-normal factor with
	// correlation time DriftTau, s (thermal and clock drift): an
	// Ornstein–Uhlenbeck process in the log of the step time, stationary
	// from the first step, that carries on from one launch to the next when
	// the launches run on one Machine.
	Drift, DriftTau float64
	// DriftWalk makes the drift a random walk instead: it moves by Drift
	// over every DriftTau seconds and never returns, as a host that slowly
	// heats or throttles over a night does.
	DriftWalk bool
	// Slowdown multiplies every step time (1.05 is a variant truly 5%
	// slower); 0 means 1.
	Slowdown float64
	// OutputSalt changes the generated text, as a speculative decoding bug
	// that alters greedy output would.
	OutputSalt string
}

// Engines calibrated on the campaign bakeoff grew out of (README): 92.6 tok/s single-stream and about
// 773 tok/s at C=70 for the baseline; EAGLE-3 topk=4 at 96.1 tok/s
// single-stream, saturating near 350 tok/s.
var (
	Baseline = Engine{StepBase: 0.0108, StepPerSeq: 0.00115, PrefillPerToken: 0.00002,
		AcceptLength: 1, MaxRunning: 256, Noise: 0.05, Drift: 0.005, DriftTau: 2}
	Eagle3TopK4 = Engine{StepBase: 0.0239, StepPerSeq: 0.0084, PrefillPerToken: 0.00002,
		AcceptLength: 2.3, MaxRunning: 256, Noise: 0.05, Drift: 0.005, DriftTau: 2}
)

// SingleStream is the engine's expected throughput at concurrency 1, tok/s,
// ignoring prefill and noise.
func (e Engine) SingleStream() float64 { return e.Throughput(1) }

// Throughput is the model's expected decode throughput with c sequences
// running, tok/s, ignoring prefill and noise.
func (e Engine) Throughput(c int) float64 {
	if e.MaxRunning > 0 {
		c = min(c, e.MaxRunning)
	}
	return float64(c) * e.AcceptLength / (e.step(c) * e.slowdown())
}

func (e Engine) step(b int) float64 { return e.StepBase + e.StepPerSeq*float64(max(b-1, 0)) }

func (e Engine) slowdown() float64 {
	if e.Slowdown > 0 {
		return e.Slowdown
	}
	return 1
}

// Sweep is the closed-loop load, as campaign.Sweep describes it.
type Sweep struct {
	Concurrency []int
	// Requests per level repeat; 0 means auto (measure.RequestsFor).
	Requests int
	// LevelRequests, when set, overrides Requests at the levels it names,
	// as a planned round takes its own count at each level.
	LevelRequests map[int]int
	MaxTokens     int
	Warmup        int
	Repeats       int
	// Prompts is how many distinct prompts the set holds.
	Prompts int
	// PromptSet is the set's hash, copied into every record.
	PromptSet string
	// Speed compresses time as `bakeoff sim --sim-speed` does.
	Speed float64
	// ITL, when set, keeps every stream's inter-token gaps in its records
	// (measure.Record.ITL), as the load generator writes them: one gap per
	// chunk after the first, its time since the chunk before over the
	// tokens it carried.
	ITL bool
}

// DefaultSweep is the seeds' sweep: eight levels, auto requests, 200 tokens.
func DefaultSweep() Sweep {
	return Sweep{Concurrency: []int{1, 2, 5, 10, 30, 70, 100, 250}, MaxTokens: 200,
		Warmup: 5, Repeats: 1, Prompts: 100, PromptSet: "sha256:synthetic", Speed: 1}
}

// RequestsFor is the number of measured requests at concurrency c.
func (s Sweep) RequestsFor(c int) int {
	if n, ok := s.LevelRequests[c]; ok && n > 0 {
		return n
	}
	return measure.RequestsFor(s.Requests, c)
}

// epochNs is where simulated time starts, so records look like real ones.
const epochNs = int64(1_780_000_000) * 1e9

// levelGap is the idle time between levels, s.
const levelGap = 0.2

// dispatchLag is the client's delay between a completion and the next send, s.
const dispatchLag = 50e-6

type seq struct {
	rec    measure.Record
	tokens int
	fresh  bool // waiting for its prefill step
	// arr follows the tokens' arrival as the load generator's client does.
	arr measure.ArrivalRecorder
	// last is when its last chunk came, ns.
	last int64
}

type engineRun struct {
	e      Engine
	s      Sweep
	rng    *rand.Rand
	m      *Machine
	launch float64 // this launch's log speed factor
	out    []measure.Record
	next   int // next prompt index
	// prod is every measured level repeat's exact token production.
	prod map[LevelKey]*Production
}

// Machine is the host a campaign's launches share: its clock and the state
// of its slow drift carry over from one launch to the next.
type Machine struct {
	// T is simulated seconds since the epoch.
	T float64
	// Drift is the current log drift; NaN until the first launch draws it
	// from the drift's stationary distribution.
	Drift float64
	// StepFactor multiplies every step time of every launch on the machine
	// (0.97: a host 3% faster than the model); 0 means 1.
	StepFactor float64
}

// NewMachine returns a machine at the epoch whose drift is not drawn yet.
func NewMachine() *Machine { return &Machine{Drift: math.NaN()} }

func (m *Machine) stepFactor() float64 {
	if m.StepFactor > 0 {
		return m.StepFactor
	}
	return 1
}

// LevelKey names one repeat of one level.
type LevelKey struct{ Level, Repeat int }

// Production is the exact token production of one level repeat, the truth
// a throughput measured from the records is checked against: the decode
// steps, each from the previous one's end (StartNs for the first) to its own
// end (StepNs, Unix ns), and the tokens each produced over all running
// sequences (Tokens).
type Production struct {
	StartNs int64
	StepNs  []int64
	Tokens  []int
}

// TokensIn is the number of tokens produced within w, each step's tokens
// spread evenly over the step: the engine works on them for the whole step,
// so a window that ends mid-step gets its share.
func (p *Production) TokensIn(w measure.Window) float64 {
	var n float64
	prev := p.StartNs
	for i, t := range p.StepNs {
		lo, hi := max(prev, w.Start), min(t, w.End)
		if hi > lo && t > prev {
			n += float64(p.Tokens[i]) * float64(hi-lo) / float64(t-prev)
		}
		prev = t
	}
	return n
}

// Simulate runs the sweep against one launch of the engine on a machine of
// its own and returns every record, warm-up included, in send order within
// each level.
func Simulate(e Engine, s Sweep, seed uint64) []measure.Record {
	recs, _ := SimulateProduction(e, s, seed)
	return recs
}

// SimulateProduction is Simulate that also returns each measured level
// repeat's exact token production.
func SimulateProduction(e Engine, s Sweep, seed uint64) ([]measure.Record, map[LevelKey]*Production) {
	return simulateOn(NewMachine(), e, s, seed)
}

// SimulateOn runs the sweep against one launch of the engine on m, from
// m's current time and drift, and leaves m at the launch's end.
func SimulateOn(m *Machine, e Engine, s Sweep, seed uint64) []measure.Record {
	recs, _ := simulateOn(m, e, s, seed)
	return recs
}

func simulateOn(m *Machine, e Engine, s Sweep, seed uint64) ([]measure.Record, map[LevelKey]*Production) {
	r := &engineRun{e: e, s: s, m: m, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		prod: map[LevelKey]*Production{}}
	if math.IsNaN(m.Drift) {
		m.Drift = e.Drift * r.rng.NormFloat64()
	}
	r.launch = e.LaunchSigma * launchDraw(r.rng, e.LaunchTailDF)
	if s.Warmup > 0 && len(s.Concurrency) > 0 {
		r.level(s.Concurrency[0], 0, s.Warmup, min(s.Warmup, s.Concurrency[0]), true)
		r.m.T += levelGap
	}
	for _, c := range s.Concurrency {
		for rep := range max(s.Repeats, 1) {
			r.level(c, rep, s.RequestsFor(c), c, false)
			r.m.T += levelGap
		}
	}
	return r.out, r.prod
}

func (r *engineRun) ns(t float64) int64 {
	speed := r.s.Speed
	if speed <= 0 {
		speed = 1
	}
	return epochNs + int64(math.Round(t/speed*1e9))
}

func (r *engineRun) promptTokens(p int) int { return 20 + (p*37)%480 }

func (r *engineRun) send(level, rep, seqNo int, warm bool) *seq {
	p := r.next % max(r.s.Prompts, 1)
	r.next++
	return &seq{rec: measure.Record{Level: measure.ConcurrencyLevel(level), Repeat: rep, Seq: seqNo, Warmup: warm,
		Prompt: p, PromptSet: r.s.PromptSet, SendNs: r.ns(r.m.T),
		DispatchLagNs: int64(dispatchLag * 1e9), PromptTokens: r.promptTokens(p), Status: 200},
		fresh: true}
}

// level runs n requests with c in flight.
func (r *engineRun) level(level, rep, n, c int, warm bool) {
	if !warm {
		r.prod[LevelKey{level, rep}] = &Production{StartNs: r.ns(r.m.T)}
	}
	sent := 0
	var waiting, running []*seq
	for sent < min(c, n) {
		waiting = append(waiting, r.send(level, rep, sent, warm))
		sent++
	}
	for len(waiting)+len(running) > 0 {
		for len(waiting) > 0 && (r.e.MaxRunning == 0 || len(running) < r.e.MaxRunning) {
			running = append(running, waiting[0])
			waiting = waiting[1:]
		}
		dt := r.e.step(len(running))
		for _, q := range running {
			if q.fresh {
				dt += r.e.PrefillPerToken * float64(q.rec.PromptTokens)
			}
		}
		dt *= r.m.stepFactor() * r.e.slowdown() * math.Exp(r.launch+r.e.Noise*r.rng.NormFloat64()-r.e.Noise*r.e.Noise/2)
		if r.e.Drift > 0 && r.e.DriftTau > 0 {
			r.m.Drift = r.e.drifted(r.m.Drift, dt, r.rng)
			dt *= math.Exp(r.m.Drift)
		}
		r.m.T += dt
		now := r.ns(r.m.T)
		keep := running[:0]
		var done, produced int
		for _, q := range running {
			gain := 1
			if r.e.AcceptLength > 1 {
				gain = r.acceptDraw()
			}
			gain = min(gain, r.s.MaxTokens-q.tokens)
			q.tokens += gain
			produced += gain
			q.arr.Add(gain, now)
			q.rec.Chunks++
			if r.s.ITL && !q.fresh && gain > 0 {
				q.rec.ITL = append(q.rec.ITL, (now-q.last)/int64(gain)/int64(measure.ITLUnit))
			}
			q.last = now
			if q.fresh {
				q.fresh = false
				q.rec.FirstNs = now
			}
			if q.tokens < r.s.MaxTokens {
				keep = append(keep, q)
				continue
			}
			q.rec.ArrivalNs = q.arr.Times(q.rec.FirstNs)
			q.rec.EndNs = now
			q.rec.Tokens = q.tokens
			q.rec.FinishReason = "length"
			q.rec.OutputHash = r.hash(q.rec.Prompt)
			r.out = append(r.out, q.rec)
			done++
		}
		running = keep
		if !warm {
			p := r.prod[LevelKey{level, rep}]
			p.StepNs = append(p.StepNs, now)
			p.Tokens = append(p.Tokens, produced)
		}
		for range done {
			if sent < n {
				q := r.send(level, rep, sent, warm)
				q.rec.SendNs = now + int64(dispatchLag*1e9/max(r.s.Speed, 1))
				waiting = append(waiting, q)
				sent++
			}
		}
	}
}

// acceptDraw draws the tokens one sequence gains in a speculative step: the
// bonus token plus each of maxDraft draft tokens accepted with the same
// probability, so the mean is exactly AcceptLength (at most maxDraft+1).
func (r *engineRun) acceptDraw() int {
	q := (r.e.AcceptLength - 1) / maxDraft
	g := 1
	for range maxDraft {
		if r.rng.Float64() < q {
			g++
		}
	}
	return g
}

// maxDraft is the draft tokens verified per speculative step.
const maxDraft = 3

func (r *engineRun) hash(prompt int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", r.e.OutputSalt, prompt))
	return hex.EncodeToString(h[:8])
}

// Concurrencies are the closed-loop levels of cs.
func Concurrencies(cs ...int) []measure.Level {
	out := make([]measure.Level, len(cs))
	for i, c := range cs {
		out[i] = measure.ConcurrencyLevel(c)
	}
	return out
}

// launchDraw is a draw of unit variance: normal, or with df > 2 Student's
// t with df degrees of freedom (a normal over the root of a chi-square
// over its df; df a whole number), scaled by √((df−2)/df).
func launchDraw(rng *rand.Rand, df float64) float64 {
	z := rng.NormFloat64()
	if df <= 2 {
		return z
	}
	n := int(math.Round(df))
	var chi float64
	for range n {
		x := rng.NormFloat64()
		chi += x * x
	}
	return z / math.Sqrt(chi/float64(n)) * math.Sqrt(float64(n-2)/float64(n))
}

// drifted is the log drift dt seconds after drift: the Ornstein–Uhlenbeck
// step, or the random walk's (DriftWalk); unchanged without a drift.
func (e Engine) drifted(drift, dt float64, rng *rand.Rand) float64 {
	if e.Drift <= 0 || e.DriftTau <= 0 {
		return drift
	}
	if e.DriftWalk {
		return drift + e.Drift*math.Sqrt(dt/e.DriftTau)*rng.NormFloat64()
	}
	a := math.Exp(-dt / e.DriftTau)
	return a*drift + math.Sqrt(1-a*a)*e.Drift*rng.NormFloat64()
}
