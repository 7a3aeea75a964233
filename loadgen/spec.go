package loadgen

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// Defaults of `bakeoff sweep`'s command line where Options has none of its
// own: the levels and warm-up of the campaign the tool grew out of.
const (
	DefaultSweepLevels = "1,2,5,10,30,70,100,250"
	DefaultSweepWarmup = 5
)

// Spec is a sweep in plain values: every setting `bakeoff sweep` takes on
// its command line. It is the one form a sweep has between the campaign and
// the load generator: the orchestrator builds one, and either writes it as
// the command line of a sweep on the host (Argv, read back there by
// ParseArgv) or turns it into Options here (Options, the tunnel). A setting
// that is a field here reaches the load generator in both ways; the round
// trip test fails for a field Argv and ParseArgv do not carry.
//
// Zero values mean what they mean in Options (MaxTokens 0: DefaultMaxTokens,
// Repeats 0: one, and so on), so a Spec needs only what it changes.
type Spec struct {
	URL string // server base URL, e.g. http://127.0.0.1:30000
	// MetricsURL is the base URL of the engine whose /metrics and info call
	// give the levels' engine figures and timeline, when it is not URL's
	// server: a worker behind a router that serves neither; "": URL.
	MetricsURL string
	Model      string // "": the first id from /v1/models
	Engine     string // an engine name (engine.Names); "": engine.Generic
	// APIKeyEnv names the environment variable holding a bearer token; the
	// token itself never appears in a command line.
	APIKeyEnv string
	Endpoint  string // EndpointChat or EndpointCompletions; "": chat

	// Concurrency (a closed loop) or Rates (an open loop, requests per
	// second) are the levels in order: exactly one of the two is set.
	Concurrency []int
	Rates       []float64
	Burstiness  float64 // the open loop's arrival shape; 0: DefaultBurstiness
	MaxInFlight int     // the open loop's cap; 0: DefaultMaxInFlight
	// Speeds replay the trace file Trace instead (neither Concurrency nor
	// Rates): each level is the trace at that many times its pace, each of
	// its hash ids a block of BlockSize tokens (0: prompts.DefaultBlockSize).
	Speeds    []float64
	Trace     string
	BlockSize int

	Requests int // per level; 0: auto (measure.RequestsFor)
	// AutoScale, with Requests auto, takes that many times the auto count
	// at every level ("auto*K" on the command line); 0 or 1: the count.
	AutoScale      int
	MaxTokens      int
	Warmup         int
	Temperature    float64
	IgnoreEOS      bool
	Repeats        int
	Seed           int64 // prompt order and arrival schedule
	RequestTimeout time.Duration
	// UniquePrompts starts every request with a prefix of its own, so no
	// request reuses another's cached prefix.
	UniquePrompts bool
	// NoPrefixCache, CacheReset and CacheResetCommand are the campaign's
	// word on the server's prefix cache (Options).
	NoPrefixCache     bool
	CacheReset        string
	CacheResetCommand string
	// Prompts says which prompt set to build: a file, the built-in set, a
	// synthetic one, and where each request's max_tokens comes from.
	Prompts prompts.Spec
	// ScrapeInterval is how often the server's /metrics is read for its
	// timeline; 0: DefaultScrapeInterval.
	ScrapeInterval time.Duration
	// Sessions, when set, makes the load multi-turn sessions (Options.Sessions).
	Sessions *prompts.SessionSpec
	// Percentiles are the percentiles (0–100) levels.json gives each latency
	// at; nil: measure.DefaultPercentiles. They change no request.
	Percentiles []float64

	// Where `bakeoff sweep` writes: the records (JSON lines), the level
	// summaries (JSON), the raw metric scrapes, and JSON events on stdout.
	// Options carries MetricsDir; the others are the command's own.
	Out        string
	Levels     string
	MetricsDir string
	JSON       bool
}

// Argv is the Spec as `bakeoff sweep`'s arguments, after the subcommand:
// what ParseArgv reads back into the same Spec. The flags that always
// appear come first, in a fixed order, so a dry run reads the same every
// time.
func (s Spec) Argv() []string {
	argv := []string{"--url", s.URL, "--engine", cmp.Or(s.Engine, engine.Generic)}
	if s.MetricsURL != "" {
		argv = append(argv, "--metrics-url", s.MetricsURL)
	}
	if s.Model != "" {
		argv = append(argv, "--model", s.Model)
	}
	if s.APIKeyEnv != "" {
		argv = append(argv, "--api-key-env", s.APIKeyEnv)
	}
	if len(s.Speeds) > 0 {
		argv = append(argv, "--speeds", joinFloats(s.Speeds), "--trace", s.Trace,
			"--block-size", strconv.Itoa(cmp.Or(s.BlockSize, prompts.DefaultBlockSize)))
	} else if len(s.Rates) > 0 {
		argv = append(argv, "--rates", joinFloats(s.Rates))
	} else {
		levels := make([]string, len(s.Concurrency))
		for i, c := range s.Concurrency {
			levels[i] = strconv.Itoa(c)
		}
		argv = append(argv, "--concurrency", strings.Join(levels, ","))
	}
	requests := "auto"
	switch {
	case s.Requests > 0:
		requests = strconv.Itoa(s.Requests)
	case s.AutoScale > 1:
		requests = "auto*" + strconv.Itoa(s.AutoScale)
	}
	argv = append(argv,
		"--requests", requests,
		"--max-tokens", strconv.Itoa(cmp.Or(s.MaxTokens, DefaultMaxTokens)),
		"--warmup", strconv.Itoa(s.Warmup),
		"--endpoint", cmp.Or(s.Endpoint, EndpointChat),
		"--prompts", cmp.Or(s.Prompts.File, prompts.Builtin),
		"--temperature", formatFloat(s.Temperature),
		"--repeats", strconv.Itoa(max(1, s.Repeats)),
		"--seed", strconv.FormatInt(s.Seed, 10),
	)
	// An open loop always states its shape, so the command line says what
	// the arrivals were without knowing the default.
	if len(s.Rates) > 0 || s.Burstiness != 0 {
		argv = append(argv, "--burstiness", formatFloat(cmp.Or(s.Burstiness, DefaultBurstiness)))
	}
	if s.MaxInFlight > 0 {
		argv = append(argv, "--max-in-flight", strconv.Itoa(s.MaxInFlight))
	}
	if s.IgnoreEOS {
		argv = append(argv, "--ignore-eos")
	}
	if s.RequestTimeout > 0 {
		argv = append(argv, "--request-timeout", s.RequestTimeout.String())
	}
	if s.UniquePrompts {
		argv = append(argv, "--unique-prompts")
	}
	if s.NoPrefixCache {
		argv = append(argv, "--no-prefix-cache")
	}
	if s.CacheReset != "" {
		argv = append(argv, "--cache-reset", s.CacheReset)
	}
	if s.CacheResetCommand != "" {
		argv = append(argv, "--cache-reset-command", s.CacheResetCommand)
	}
	if s.Prompts.OutputLengths != "" && s.Prompts.OutputLengths != prompts.OutputMaxTokens {
		argv = append(argv, "--output-lengths", s.Prompts.OutputLengths)
	}
	if s.Prompts.Synthetic != nil {
		argv = append(argv, "--synthetic", s.Prompts.Synthetic.String())
	}
	// The default is left out, so a command line says only what differs.
	if s.ScrapeInterval > 0 && s.ScrapeInterval != DefaultScrapeInterval {
		argv = append(argv, "--scrape-interval", s.ScrapeInterval.String())
	}
	if s.Sessions != nil {
		argv = append(argv, "--sessions", s.Sessions.String())
	}
	if len(s.Percentiles) > 0 {
		argv = append(argv, "--percentiles", measure.FormatPercentiles(s.Percentiles))
	}
	for _, f := range []struct{ flag, value string }{{"--out", s.Out}, {"--levels", s.Levels}, {"--metrics-dir", s.MetricsDir}} {
		if f.value != "" {
			argv = append(argv, f.flag, f.value)
		}
	}
	if s.JSON {
		argv = append(argv, "--json")
	}
	return argv
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func joinFloats(fs []float64) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = measure.FormatRate(f)
	}
	return strings.Join(out, ",")
}

// ParseArgv reads `bakeoff sweep`'s arguments, after the subcommand, into a
// Spec, with the defaults its usage text gives, and checks each value. fs
// is the flag set to register the flags on, whose output and usage are the
// caller's; nil makes a quiet one. A request for help returns flag.ErrHelp.
func ParseArgv(fs *flag.FlagSet, args []string) (Spec, error) {
	if fs == nil {
		fs = flag.NewFlagSet("sweep", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
	}
	var (
		s                                                  Spec
		conc, rates, speeds, requests, lengths, synt, sess string
		percentiles                                        string
	)
	fs.StringVar(&s.URL, "url", "", "")
	fs.StringVar(&s.MetricsURL, "metrics-url", "", "")
	fs.StringVar(&s.Model, "model", "", "")
	fs.StringVar(&s.APIKeyEnv, "api-key-env", "", "")
	fs.StringVar(&s.Engine, "engine", engine.Generic, "")
	fs.BoolVar(&s.UniquePrompts, "unique-prompts", false, "")
	fs.BoolVar(&s.NoPrefixCache, "no-prefix-cache", false, "")
	fs.StringVar(&s.CacheReset, "cache-reset", "", "")
	fs.StringVar(&s.CacheResetCommand, "cache-reset-command", "", "")
	fs.StringVar(&conc, "concurrency", DefaultSweepLevels, "")
	fs.StringVar(&rates, "rates", "", "")
	fs.StringVar(&speeds, "speeds", "", "")
	fs.StringVar(&s.Trace, "trace", "", "")
	fs.IntVar(&s.BlockSize, "block-size", prompts.DefaultBlockSize, "")
	fs.Float64Var(&s.Burstiness, "burstiness", DefaultBurstiness, "")
	fs.IntVar(&s.MaxInFlight, "max-in-flight", DefaultMaxInFlight, "")
	fs.StringVar(&requests, "requests", "auto", "")
	fs.IntVar(&s.MaxTokens, "max-tokens", DefaultMaxTokens, "")
	fs.IntVar(&s.Warmup, "warmup", DefaultSweepWarmup, "")
	fs.StringVar(&s.Endpoint, "endpoint", EndpointChat, "")
	fs.StringVar(&s.Prompts.File, "prompts", prompts.Builtin, "")
	fs.StringVar(&lengths, "output-lengths", prompts.OutputMaxTokens, "")
	fs.StringVar(&synt, "synthetic", "", "")
	fs.StringVar(&sess, "sessions", "", "")
	fs.StringVar(&percentiles, "percentiles", "", "")
	fs.Float64Var(&s.Temperature, "temperature", 0, "")
	fs.BoolVar(&s.IgnoreEOS, "ignore-eos", false, "")
	fs.IntVar(&s.Repeats, "repeats", 1, "")
	fs.Int64Var(&s.Seed, "seed", 0, "")
	fs.DurationVar(&s.RequestTimeout, "request-timeout", DefaultRequestTimeout, "")
	fs.DurationVar(&s.ScrapeInterval, "scrape-interval", DefaultScrapeInterval, "")
	fs.StringVar(&s.Out, "out", "", "")
	fs.StringVar(&s.Levels, "levels", "", "")
	fs.StringVar(&s.MetricsDir, "metrics-dir", "", "")
	fs.BoolVar(&s.JSON, "json", false, "")
	if err := fs.Parse(args); err != nil {
		return Spec{}, err
	}
	if fs.NArg() > 0 {
		return Spec{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if s.URL == "" {
		return Spec{}, errors.New("--url is required")
	}
	if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Spec{}, fmt.Errorf("--url %q: want http://HOST:PORT", s.URL)
	}
	if s.MetricsURL != "" {
		if u, err := url.Parse(s.MetricsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Spec{}, fmt.Errorf("--metrics-url %q: want http://HOST:PORT", s.MetricsURL)
		}
	}
	concSet := false
	fs.Visit(func(f *flag.Flag) { concSet = concSet || f.Name == "concurrency" })
	switch {
	case speeds != "" && (concSet || rates != ""):
		return Spec{}, errors.New("--speeds with --rates or --concurrency: want one of the three")
	case (speeds != "") != (s.Trace != ""):
		return Spec{}, errors.New("--speeds and --trace: a replay needs both")
	case speeds != "":
		for _, r := range strings.Split(speeds, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
			if err != nil || !(f >= measure.RateResolution && f <= measure.MaxSpeed) {
				return Spec{}, fmt.Errorf("--speeds %q: want speeds (%g to %d times the trace's pace) separated by commas", speeds, measure.RateResolution, measure.MaxSpeed)
			}
			s.Speeds = append(s.Speeds, f)
		}
		if s.BlockSize < 1 || s.BlockSize > prompts.MaxBlockSize {
			return Spec{}, fmt.Errorf("--block-size %d: want 1 to %d tokens", s.BlockSize, prompts.MaxBlockSize)
		}
	case rates != "" && concSet:
		return Spec{}, errors.New("--rates and --concurrency: want one of the two")
	case rates != "":
		for _, r := range strings.Split(rates, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
			if err != nil || !(f >= measure.RateResolution && f <= measure.MaxRate) {
				return Spec{}, fmt.Errorf("--rates %q: want rates in requests per second (%g to %g) separated by commas", rates, measure.RateResolution, float64(measure.MaxRate))
			}
			s.Rates = append(s.Rates, f)
		}
	default:
		for _, c := range strings.Split(conc, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || n < 1 {
				return Spec{}, fmt.Errorf("--concurrency %q: want positive integers separated by commas", conc)
			}
			s.Concurrency = append(s.Concurrency, n)
		}
	}
	if speeds == "" {
		s.BlockSize = 0 // a block size means something only to a replay
	}
	if !(s.Burstiness > 0) {
		return Spec{}, fmt.Errorf("--burstiness %g: want more than 0", s.Burstiness)
	}
	if s.MaxInFlight < 1 {
		return Spec{}, fmt.Errorf("--max-in-flight %d: want at least 1", s.MaxInFlight)
	}
	if k, ok := strings.CutPrefix(requests, "auto*"); ok {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 {
			return Spec{}, fmt.Errorf("--requests %q: want a positive number, auto, or auto*K (K times the auto count)", requests)
		}
		s.AutoScale = n
	} else if requests != "auto" {
		n, err := strconv.Atoi(requests)
		if err != nil || n < 1 {
			return Spec{}, fmt.Errorf("--requests %q: want a positive number, auto, or auto*K (K times the auto count)", requests)
		}
		s.Requests = n
	}
	switch {
	case s.MaxTokens < 1:
		return Spec{}, fmt.Errorf("--max-tokens %d: want at least 1", s.MaxTokens)
	case s.Warmup < 0:
		return Spec{}, fmt.Errorf("--warmup %d: want 0 or more", s.Warmup)
	case s.Repeats < 1:
		return Spec{}, fmt.Errorf("--repeats %d: want at least 1", s.Repeats)
	case s.RequestTimeout <= 0:
		return Spec{}, fmt.Errorf("--request-timeout %s: want a positive duration", s.RequestTimeout)
	case s.ScrapeInterval <= 0:
		return Spec{}, fmt.Errorf("--scrape-interval %s: want a positive duration", s.ScrapeInterval)
	case s.Temperature < 0:
		return Spec{}, fmt.Errorf("--temperature %g: want 0 or more", s.Temperature)
	case s.Endpoint != EndpointChat && s.Endpoint != EndpointCompletions:
		return Spec{}, fmt.Errorf("--endpoint %q: want chat or completions", s.Endpoint)
	}
	if engine.Lookup(s.Engine) == nil {
		return Spec{}, fmt.Errorf("--engine %q: want %s", s.Engine, engine.NameList())
	}
	if lengths != prompts.OutputMaxTokens {
		s.Prompts.OutputLengths = lengths
	}
	if percentiles != "" {
		ps, err := measure.ParsePercentiles(percentiles)
		if err != nil {
			return Spec{}, fmt.Errorf("--percentiles: %w", err)
		}
		s.Percentiles = ps
	}
	if synt != "" {
		syn, err := prompts.ParseSynthetic(synt)
		if err != nil {
			return Spec{}, fmt.Errorf("--synthetic: %w", err)
		}
		s.Prompts.Synthetic = &syn
	}
	if sess != "" {
		ss, err := prompts.ParseSessions(sess)
		if err != nil {
			return Spec{}, fmt.Errorf("--sessions: %w", err)
		}
		s.Sessions = &ss
	}
	return s, nil
}

// Options turns the Spec into the options Run takes: the engine's profile
// and the prompt set (read from disk for a file) in place of their names.
// The caller adds what has no place on a command line: the API key, the
// HTTP client, where records and events go.
func (s Spec) Options() (Options, error) {
	name := cmp.Or(s.Engine, engine.Generic)
	eng := engine.Lookup(name)
	if eng == nil {
		return Options{}, fmt.Errorf("engine %q: want %s", name, engine.NameList())
	}
	var (
		set   *prompts.Set
		trace *prompts.Trace
		err   error
	)
	if s.Trace != "" {
		// The replay's prompts are the trace's (Run makes them from it).
		if trace, err = prompts.ReadTrace(s.Trace, s.BlockSize); err != nil {
			return Options{}, err
		}
	}
	if set, err = prompts.Make(s.Prompts, s.Seed, nil); err != nil {
		return Options{}, fmt.Errorf("building the prompt set: %w", err)
	}
	return Options{
		URL: s.URL, MetricsURL: s.MetricsURL, Model: s.Model, Endpoint: s.Endpoint,
		Concurrency: s.Concurrency, Rates: s.Rates, Burstiness: s.Burstiness, MaxInFlight: s.MaxInFlight,
		Speeds: s.Speeds, Trace: trace,
		Requests: s.Requests, AutoScale: s.AutoScale, MaxTokens: s.MaxTokens, Warmup: s.Warmup, Temperature: s.Temperature,
		IgnoreEOS: s.IgnoreEOS, Repeats: s.Repeats, Seed: s.Seed, RequestTimeout: s.RequestTimeout,
		UniquePrompts: s.UniquePrompts, Prompts: set, Sessions: s.Sessions, MetricsDir: s.MetricsDir, Engine: eng,
		NoPrefixCache: s.NoPrefixCache, CacheReset: s.CacheReset, CacheResetCommand: s.CacheResetCommand,
		ScrapeInterval: s.ScrapeInterval,
		Percentiles:    s.Percentiles,
	}, nil
}
