package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// Endpoint names for Options.Endpoint.
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// Sweep defaults.
const (
	// DefaultMaxTokens is the completion length when Options.MaxTokens is 0.
	DefaultMaxTokens = 200
	// ProgressInterval is the shortest time between two progress events.
	ProgressInterval = 250 * time.Millisecond
)

// Event kinds.
const (
	EventStart      = "start" // the model is known; Message names it
	EventWarmup     = "warmup"
	EventLevelStart = "level_start"
	EventProgress   = "progress"
	EventLevelEnd   = "level_end"
	EventWarning    = "warning"
)

// Event is a progress report from a running sweep. It is also the JSON line
// `bakeoff sweep --json` prints, so a remote caller decodes the same type.
// The warm-up reports as Kind "warmup": first with Done 0 and Level the
// warm-up's concurrency, then as it progresses (Done > 0, Level 0).
type Event struct {
	Kind   string        `json:"event"`
	Level  measure.Level `json:"level,omitzero"`
	Repeat int           `json:"repeat,omitempty"`
	// Done and Total count the level's (or the warm-up's) finished and
	// planned requests.
	Done  int `json:"done,omitempty"`
	Total int `json:"total,omitempty"`
	// TokPerSec is the level's output tokens per second so far.
	TokPerSec float64               `json:"tok_per_sec,omitempty"`
	Summary   *measure.LevelSummary `json:"summary,omitempty"`
	Message   string                `json:"message,omitempty"`
}

// Options configure a sweep.
type Options struct {
	URL string // server base URL, e.g. http://127.0.0.1:30000
	// MetricsURL is the base URL the engine figures and the timeline are
	// scraped from, when not URL (Spec.MetricsURL); "": URL.
	MetricsURL string
	Model      string // empty: the first id from /v1/models
	APIKey     string // sent as a bearer token; never written anywhere
	// Endpoint is EndpointChat (default) or EndpointCompletions.
	Endpoint    string
	Concurrency []int // closed-loop levels, in order
	// Rates are open-loop levels instead of Concurrency (exactly one of the
	// two is set): arrival rates in requests per second, in order, each
	// level's arrivals scheduled in advance by Arrivals with Burstiness (0:
	// DefaultBurstiness) from Seed. MaxInFlight caps the requests in flight
	// (0: DefaultMaxInFlight).
	Rates       []float64
	Burstiness  float64
	MaxInFlight int
	// Speeds replay Trace instead (with neither Concurrency nor Rates): each
	// level sends every row of the trace at its timestamp divided by the
	// speed. Prompts is then the trace's (replaySet), made by Run.
	Speeds []float64
	Trace  *prompts.Trace
	// Requests per level; 0 is auto (measure.RequestsFor).
	Requests int
	// AutoScale, with Requests auto, multiplies every level's `auto` count
	// (a sequential campaign's planner buys precision with it); 0 or 1:
	// the count itself.
	AutoScale   int
	MaxTokens   int // 0: DefaultMaxTokens
	Warmup      int // requests before the first level, recorded, not measured
	Temperature float64
	IgnoreEOS   bool
	Repeats     int   // runs of each level; 0 means 1
	Seed        int64 // prompt order
	Prompts     *prompts.Set
	// Sessions, when set, makes every level multi-turn sessions drawn from
	// Prompts and Seed: Concurrency counts users, Rates are sessions per
	// second, and Requests is the fewest requests (turns) a level sends.
	Sessions *prompts.SessionSpec
	// RequestTimeout bounds one request; 0: DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Client sends the requests; nil: a client tuned for many streams.
	Client *http.Client
	// Records is called for every record, warm-up included, in completion
	// order and never concurrently; an error stops the sweep.
	Records func(measure.Record) error
	// Events receives progress; may be nil. Called from one goroutine at a time.
	Events func(Event)
	// MetricsDir, when set, receives the raw /metrics and engine info
	// scrapes of each level.
	MetricsDir string
	// Percentiles are the percentiles each level summary gives the
	// latencies at; nil: measure.DefaultPercentiles.
	Percentiles []float64
	// UniquePrompts starts every request's prompt with UniquePrefix, so no
	// request can reuse another's cached prefix.
	UniquePrompts bool
	// Engine is the server's engine profile: what its metrics say and how
	// its prefix cache is cleared. nil: engine generic (any known metrics,
	// no reset).
	Engine *engine.Profile
	// NoPrefixCache, CacheReset and CacheResetCommand are what the campaign
	// says of the server's prefix cache in place of the profile's reset
	// (campaign.PrefixCache): that it keeps none, the HTTP call
	// ("METHOD /path") or the shell command that clears it.
	NoPrefixCache     bool
	CacheReset        string
	CacheResetCommand string
	// RunCommand runs CacheResetCommand where the server's host runs it;
	// nil: here, with sh -c (the sweep runs on that host).
	RunCommand func(ctx context.Context, cmd string) error
	// ScrapeInterval is how often the server's /metrics is read for its
	// timeline (MetricsDir/timeline.jsonl and each level's Server summary);
	// 0: DefaultScrapeInterval.
	ScrapeInterval time.Duration
}

// Result is what a sweep measured.
type Result struct {
	Model  string
	Levels []measure.LevelSummary
	// UsageMissing is true when the server sent no usage, so token counts
	// are estimates.
	UsageMissing bool
	Warnings     []string
}

// RateWarmupConcurrency bounds the warm-up's concurrency in a rate sweep,
// which has no concurrency of its own: the warm-up is a closed loop.
const RateWarmupConcurrency = 4

// RequestsFor is the number of measured requests at concurrency c.
func (o Options) RequestsFor(c int) int {
	return measure.RequestsFor(o.Requests, c) * o.autoScale()
}

// NewHTTPClient returns a client for many concurrent streams: enough idle
// connections that a closed loop reuses them, no compression (a gzip layer
// would buffer the stream), and no overall timeout (each request has its own
// deadline).
func NewHTTPClient(maxConns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

// Run warms the server up and runs every level in order. Cancelling ctx
// stops it within a second: in-flight requests are recorded as ErrCanceled,
// the partial level is summarised, and Run returns what it measured with
// ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Client == nil {
		o.Client = NewHTTPClient(max(100, maxOf(o.Concurrency)))
	}
	base := strings.TrimRight(o.URL, "/")
	res := &Result{Model: o.Model}
	if res.Model == "" {
		m, err := FirstModel(ctx, o.Client, base, o.APIKey)
		if err != nil {
			return nil, err
		}
		res.Model = m
	}
	s := &sweep{o: o, res: res, base: base, metricsBase: base}
	if o.MetricsURL != "" {
		s.metricsBase = strings.TrimRight(o.MetricsURL, "/")
	}
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	s.event(Event{Kind: EventStart, Message: res.Model})
	err := s.run(ctx)
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

func (o *Options) check() error {
	if o.URL == "" {
		return errors.New("loadgen: no server URL")
	}
	if o.Engine == nil {
		o.Engine = engine.Lookup(engine.Generic)
	}
	if err := o.checkReplay(); err != nil {
		return err
	}
	switch {
	case len(o.Speeds) > 0:
	case len(o.Concurrency) == 0 && len(o.Rates) == 0:
		return errors.New("loadgen: no concurrency levels or rates")
	case len(o.Concurrency) > 0 && len(o.Rates) > 0:
		return errors.New("loadgen: both concurrency levels and rates: want one of the two")
	}
	for _, r := range o.Rates {
		if !(r >= measure.RateResolution && r <= measure.MaxRate) {
			return fmt.Errorf("loadgen: rate %g: want %g to %g requests per second", r, measure.RateResolution, float64(measure.MaxRate))
		}
	}
	if o.Burstiness < 0 || o.MaxInFlight < 0 {
		return errors.New("loadgen: burstiness and the in-flight cap must not be negative")
	}
	if o.Burstiness == 0 {
		o.Burstiness = DefaultBurstiness
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			return fmt.Errorf("loadgen: concurrency %d: want at least 1", c)
		}
	}
	switch o.Endpoint {
	case "":
		o.Endpoint = EndpointChat
	case EndpointChat, EndpointCompletions:
	default:
		return fmt.Errorf("loadgen: endpoint %q: want %q or %q", o.Endpoint, EndpointChat, EndpointCompletions)
	}
	if o.Trace != nil {
		set, err := replaySet(o.Trace, o.Endpoint == EndpointCompletions && o.Engine != nil && o.Engine.TokenPrompts)
		if err != nil {
			return err
		}
		o.Prompts = set
	}
	if o.Prompts == nil || len(o.Prompts.Prompts) == 0 {
		return errors.New("loadgen: no prompts")
	}
	if o.Requests < 0 || o.Warmup < 0 || o.Repeats < 0 || o.MaxTokens < 0 {
		return errors.New("loadgen: requests, warm-up, repeats and max tokens must not be negative")
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Repeats == 0 {
		o.Repeats = 1
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.ScrapeInterval <= 0 {
		o.ScrapeInterval = DefaultScrapeInterval
	}
	if o.Engine == nil {
		o.Engine = engine.Lookup(engine.Generic)
	}
	return nil
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// sweep is one Run's state.
type sweep struct {
	o    Options
	res  *Result
	base string
	// metricsBase is where the engine figures and the timeline are read:
	// base, or Options.MetricsURL.
	metricsBase string
	q           *requester
	probe       *http.Client // for the metrics scrapes
	bodies      [][]byte     // request body per prompt, built once
	// lengths is how prompts asked for in tokens were made that long
	// (measure.LevelSummary.InputLengths); exact is each prompt's length in
	// tokens as sent where known, else 0.
	lengths string
	exact   []int
	order   []int // prompt index per sequence number, from the seed
	// sessions draws the conversations of a sweep of sessions; nil otherwise.
	sessions *prompts.Sessions

	mu      sync.Mutex      // serialises Records and Events
	stopErr error           // the first error from Records
	warned  map[string]bool // cache-reset notes already warned about
	// timeline is the server's metrics scraped through the sweep; nil when
	// the engine publishes none it reads.
	timeline *timelineScraper
}

// requestBody is the JSON a request sends. Sampling fields are always
// present so every variant of a campaign gets exactly the same request.
type requestBody struct {
	Model    string            `json:"model"`
	Messages []prompts.Message `json:"messages,omitempty"`
	Prompt   any               `json:"prompt,omitempty"` // text, or token ids

	MaxTokens     int             `json:"max_tokens"`
	Temperature   float64         `json:"temperature"`
	Stream        bool            `json:"stream"`
	StreamOptions map[string]bool `json:"stream_options"`
	IgnoreEOS     bool            `json:"ignore_eos,omitempty"`
}

func (s *sweep) prepare(ctx context.Context) error {
	path := "/v1/chat/completions"
	if s.o.Endpoint == EndpointCompletions {
		path = "/v1/completions"
	}
	// The server's metrics are read on connections of their own, so that a
	// scrape neither takes a connection a request would have reused nor
	// leaves one of its own for a request to find closed.
	s.probe = ownClient(s.o.Client, false)
	s.q = &requester{client: s.o.Client, fresh: ownClient(s.o.Client, true), url: s.base + path, apiKey: s.o.APIKey,
		timeout: s.o.RequestTimeout, maxTokens: s.o.MaxTokens}
	// The set is the sweep's own from here: cutting prompts to their
	// lengths must not change the caller's.
	set := *s.o.Prompts
	set.Prompts = slices.Clone(set.Prompts)
	s.o.Prompts = &set
	var err error
	if s.lengths, s.exact, err = s.exactLengths(ctx); err != nil {
		return fmt.Errorf("making prompt lengths exact with %s's tokenize call: %w", s.o.Engine.Title, err)
	}
	if s.lengths == measure.LengthsEstimated {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("prompt lengths are estimated at %.3g tokens per word: engine %s has no tokenize call", prompts.TokensPerWord, s.o.Engine.Name))
	}
	for _, p := range s.o.Prompts.Prompts {
		data, err := s.encode(p, "")
		if err != nil {
			return err
		}
		s.bodies = append(s.bodies, data)
	}
	rng := rand.New(rand.NewPCG(uint64(s.o.Seed), uint64(len(s.bodies))))
	s.order = rng.Perm(len(s.bodies))
	if s.o.Trace != nil {
		// A trace is replayed in its own order: row i is request i.
		for i := range s.order {
			s.order[i] = i
		}
	}
	if s.o.Sessions != nil {
		ss, err := prompts.NewSessions(*s.o.Sessions, s.o.Prompts, s.o.Seed)
		if err != nil {
			return err
		}
		s.sessions = ss
	}
	return nil
}

// encode builds the request body of prompt p, its text led by prefix.
func (s *sweep) encode(p prompts.Prompt, prefix string) ([]byte, error) {
	b := requestBody{Model: s.res.Model, MaxTokens: s.maxTokens(p), Temperature: s.o.Temperature,
		Stream: true, StreamOptions: map[string]bool{"include_usage": true}, IgnoreEOS: s.o.IgnoreEOS}
	if s.o.Endpoint == EndpointCompletions {
		b.Prompt = prefix + p.Text
		if p.IDs != nil {
			b.Prompt = p.IDs
		}
	} else {
		b.Messages = p.Messages
		if prefix != "" && len(p.Messages) > 0 {
			b.Messages = slices.Clone(p.Messages)
			b.Messages[0].Content = prefix + b.Messages[0].Content
		}
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return withFields(data, s.o.Engine.AcceptRequest)
}

// maxTokens is what prompt p asks for: its own max_tokens (a recorded or
// synthetic output length), else the sweep's.
func (s *sweep) maxTokens(p prompts.Prompt) int {
	if p.MaxTokens > 0 {
		return p.MaxTokens
	}
	return s.o.MaxTokens
}

// UniquePrefix is what Options.UniquePrompts puts before a request's
// prompt: its level's number (measure.Level.Key), repeat and sequence
// number (w for the warm-up), the same for every scenario of a campaign and
// different for every request, so no request finds another's prompt in a
// prefix cache.
func UniquePrefix(rec *measure.Record) string {
	if rec.Warmup {
		return fmt.Sprintf("[w-%d] ", rec.Seq)
	}
	return fmt.Sprintf("[c%d-r%d-%d] ", rec.Level.Key(), rec.Repeat, rec.Seq)
}

// body is the request body for prompt p sent as rec.
func (s *sweep) body(p int, rec *measure.Record) []byte {
	if !s.o.UniquePrompts {
		return s.bodies[p]
	}
	data, err := s.encode(s.o.Prompts.Prompts[p], UniquePrefix(rec))
	if err != nil {
		return s.bodies[p] // cannot happen: the same prompt encoded in prepare
	}
	return data
}

// promptFor maps a sequence number to a prompt index. Every level starts at
// the beginning of the same seeded order, so every level and every variant
// sends the same prompts in the same order.
func (s *sweep) promptFor(seq int) int { return s.order[seq%len(s.order)] }

func (s *sweep) event(e Event) {
	if s.o.Events != nil {
		s.o.Events(e)
	}
}

func (s *sweep) warn(msg string) {
	s.res.Warnings = append(s.res.Warnings, msg)
	s.mu.Lock()
	s.event(Event{Kind: EventWarning, Message: msg})
	s.mu.Unlock()
}

func (s *sweep) run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// The server's timeline runs through every level, warm-up included.
	s.timeline = s.startTimeline(ctx)
	defer s.timeline.stop()
	if s.o.Warmup > 0 {
		c := min(s.o.Warmup, maxOf(s.o.Concurrency))
		if len(s.o.Rates) > 0 || len(s.o.Speeds) > 0 {
			c = min(s.o.Warmup, RateWarmupConcurrency)
		}
		s.mu.Lock()
		s.event(Event{Kind: EventWarmup, Total: s.o.Warmup, Level: measure.ConcurrencyLevel(c)})
		s.mu.Unlock()
		warm := levelSpec{level: measure.ConcurrencyLevel(c), n: s.o.Warmup, warmup: true}
		var recs []measure.Record
		if s.sessions != nil {
			// Sessions of their own, so the warm-up also runs the path of
			// a turn whose history the prefix cache holds (docs/LOADGEN.md).
			recs = s.sessionLevel(ctx, stop, warm)
		} else {
			recs = s.level(ctx, stop, warm)
		}
		if s.stopErr != nil {
			return s.stopErr
		}
		if ctx.Err() != nil {
			return nil
		}
		if failed := countFailed(recs); len(recs) > 0 && failed == len(recs) {
			s.warn(fmt.Sprintf("all %d warm-up requests failed (%s)", failed, recs[0].Error))
		}
	}
	for _, c := range s.o.levels() {
		n := s.o.requestsAt(c)
		if !measure.IsRate(c) && n < 2*c.Concurrency {
			s.warn(fmt.Sprintf("%s: %d requests are fewer than 2×C, so the level barely reaches its concurrency (use --requests auto)", c, n))
		}
		for r := 0; r < s.o.Repeats; r++ {
			// Every level starts from an empty prefix cache, so no level
			// (and no scenario run against a kept server) is served from
			// prompts an earlier one left behind.
			reset, resetNote := s.resetCache(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if s.sessions != nil {
				_, n = s.sessions.Plan(s.o.requestsAt(c)) // whole sessions: at least the requests asked for
			}
			m := newMetricsProbe(s.probe, s.o.Engine, s.metricsBase, s.o.APIKey, s.o.MetricsDir, c, r)
			m.scrape(ctx, phaseBefore)
			s.mu.Lock()
			s.event(Event{Kind: EventLevelStart, Level: c, Repeat: r, Total: n})
			s.mu.Unlock()
			spec := levelSpec{level: c, n: n, repeat: r, probe: m}
			var recs []measure.Record
			switch {
			case s.sessions != nil:
				recs = s.sessionLevel(ctx, stop, spec)
			case measure.IsSpeed(c):
				spec.due = s.o.Trace.At(c.Speed)
				recs = s.openLevel(ctx, stop, spec)
			case measure.IsRate(c):
				spec.due = Arrivals(n, c.Rate, s.o.Burstiness, s.o.Seed, c, r)
				recs = s.openLevel(ctx, stop, spec)
			default:
				recs = s.level(ctx, stop, spec)
			}
			if len(recs) == 0 {
				return s.stopErr
			}
			if ctx.Err() == nil {
				m.scrape(ctx, phaseAfter)
			}
			sum := measure.SummarizeAt(c, r, measure.PercentilesOr(s.o.Percentiles), recs)
			sum.Server = s.timeline.summary(sum)
			sum.CacheReset, sum.CacheResetNote, sum.UniquePrompts = reset, resetNote, s.o.UniquePrompts
			sum.NoPrefixCache = s.o.NoPrefixCache
			sum.InputLengths = s.lengths
			sum.Categories = measure.Categories(c, recs)
			sum.Sessions = measure.SessionsOf(recs)
			if acc, ok := measure.LevelAcceptance(c, recs); ok && s.o.Engine.ResponseAccept != "" {
				sum.AcceptLength, sum.AcceptLengthSource = new(acc.Length), s.o.Engine.ResponseAccept
			} else if al, src := m.acceptLength(); src != "" {
				sum.AcceptLength, sum.AcceptLengthSource = &al, src
			}
			for _, w := range m.warnings {
				sum.Warnings = append(sum.Warnings, w)
			}
			if ctx.Err() != nil && len(recs) < n {
				sum.Warnings = append(sum.Warnings, fmt.Sprintf("level stopped after %d of %d requests: the sweep was canceled", len(recs), n))
			}
			if sum.TokensEstimated && !s.res.UsageMissing {
				s.res.UsageMissing = true
				s.warn("the server sends no usage in its streams: token counts are estimated (is stream_options.include_usage supported?)")
			}
			s.res.Levels = append(s.res.Levels, sum)
			s.mu.Lock()
			s.event(Event{Kind: EventLevelEnd, Level: c, Repeat: r, Done: len(recs), Total: n, TokPerSec: sum.Throughput, Summary: &sum})
			s.mu.Unlock()
			if s.stopErr != nil {
				return s.stopErr
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	}
	return nil
}

// runLocal runs a reset command on this machine, bounded as an engine's
// reset call is, with its output in the error.
func runLocal(ctx context.Context, cmd string) error {
	ctx, cancel := context.WithTimeout(ctx, resetCommandTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	out, err := c.CombinedOutput()
	if err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
		return err
	}
	return nil
}

// resetCommandTimeout bounds a prefix_cache.reset_command: a reset that
// never returns must not hold the sweep.
const resetCommandTimeout = 60 * time.Second

// resetCache clears the server's prefix cache with the campaign's reset,
// else its engine's call. It
// returns what it did, or why it did nothing; the first time a reason
// comes up it is also a sweep warning.
func (s *sweep) resetCache(ctx context.Context) (did, note string) {
	p := s.o.Engine
	switch {
	case s.o.NoPrefixCache:
		return "", ""
	case s.o.CacheReset != "":
		var err error
		if did, err = engine.CallReset(ctx, s.q.fresh, s.base, s.o.CacheReset, s.o.APIKey); err == nil {
			return did + " (prefix_cache.reset)", ""
		}
		note = "clearing the prefix cache failed: " + err.Error()
	case s.o.CacheResetCommand != "":
		run := s.o.RunCommand
		if run == nil {
			run = runLocal
		}
		if err := run(ctx, s.o.CacheResetCommand); err != nil {
			note = fmt.Sprintf("clearing the prefix cache failed: %s: %v", s.o.CacheResetCommand, err)
		} else {
			return s.o.CacheResetCommand + " (prefix_cache.reset_command)", ""
		}
	case p.Reset == nil:
		note = "no prefix-cache reset: " + p.NoReset
	default:
		var err error
		// On a new connection: a reset is not sent twice, so it must not
		// go out on a kept-alive connection the server may have closed.
		did, err = p.Reset(ctx, s.q.fresh, s.base, s.o.APIKey)
		var nr *engine.NoResetError
		switch {
		case err == nil:
			return did, ""
		case errors.As(err, &nr):
			note = "no prefix-cache reset: " + nr.Reason
		default:
			note = "clearing the prefix cache failed: " + err.Error()
		}
	}
	if s.o.UniquePrompts {
		note += " (every prompt is unique, so there is no prefix to reuse)"
	}
	if !s.warned[note] {
		if s.warned == nil {
			s.warned = map[string]bool{}
		}
		s.warned[note] = true
		s.warn(note)
	}
	return "", note
}

func countFailed(recs []measure.Record) int {
	n := 0
	for _, r := range recs {
		if !r.OK() {
			n++
		}
	}
	return n
}

// levelSpec is one level's run: n requests, level.Concurrency in flight
// (closed loop), or sent at their due times (open loop).
type levelSpec struct {
	level     measure.Level
	n, repeat int
	warmup    bool
	probe     *metricsProbe   // mid-level scrape; nil for the warm-up
	due       []time.Duration // open loop: when each request is due after the start
}

// level runs a closed loop: c workers, each sending its next request the
// moment its previous one ends, until n requests have been sent. It returns
// the records in completion order.
func (s *sweep) level(ctx context.Context, stop context.CancelFunc, l levelSpec) []measure.Record {
	var (
		next  int // next sequence number to send; guarded by s.mu
		start = nowNs()
		t     = newTally(l, start)
		wg    sync.WaitGroup
	)
	worker := func() {
		defer wg.Done()
		freed := start // when this slot last became free
		for {
			s.mu.Lock()
			seq := next
			if seq >= l.n || ctx.Err() != nil {
				s.mu.Unlock()
				return
			}
			next++
			s.mu.Unlock()

			p := s.promptFor(seq)
			if l.warmup {
				// From the end of the order, so the warm-up does not pre-fill
				// the prefix cache for the first measured requests alone.
				p = s.order[len(s.order)-1-seq%len(s.order)]
			}
			rec := measure.Record{Level: l.level, Repeat: l.repeat, Seq: seq, Warmup: l.warmup, Prompt: p,
				PromptSet: s.o.Prompts.Hash, Category: s.o.Prompts.Prompts[p].Category,
				MaxTokens: s.o.Prompts.Prompts[p].MaxTokens, InputTokens: s.exact[p]}
			if l.warmup {
				rec.Level = measure.Level{}
			}
			firstSend := s.q.do(ctx, s.body(p, &rec), &rec)
			// Up to the first send: the time a request spent finding its
			// connection closed by the server is not the client's delay.
			rec.DispatchLagNs = max(0, firstSend-freed)
			// The slot is free from the stream's last event on: what the
			// client does after it (reading the rest of the response so the
			// connection can be reused, writing the record) is its own
			// delay, and counts in the next request's lag.
			freed = rec.EndNs
			if freed == 0 {
				freed = nowNs()
			}

			s.finish(ctx, stop, t, rec, &wg)
		}
	}
	wg.Add(l.level.Concurrency)
	for range l.level.Concurrency {
		go worker()
	}
	wg.Wait()
	return t.recs
}
