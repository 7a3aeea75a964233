package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Defaults of `bakeoff sweep`: the levels and sizes of the campaign the tool
// grew out of (shared/seeds/).
const (
	defaultSweepLevels = "1,2,5,10,30,70,100,250"
	defaultSweepWarmup = 5
)

const sweepUsage = `
Usage: bakeoff sweep --url URL [flags]

Runs a closed-loop concurrency sweep against an OpenAI-compatible streaming
server: a warm-up, then for each level exactly C requests in flight until the
level's requests are done. With --rates it is an open loop instead: each
level's requests arrive at a rate, on a schedule drawn in advance from the
seed, however many are still in flight. Prints one line per level as it ends, then a
summary. Token counts come from the server's usage; TTFT, TPOT and steady-
state throughput are explained in docs/LOADGEN.md.

Flags:
  --url URL              server base URL (required), e.g. http://127.0.0.1:30000
  --model M              model name (default: the first id from /v1/models)
  --engine E             the server's engine: generic, llamacpp, sglang, trtllm or vllm
                         (default generic): how to read its accept length and
                         clear its prefix cache before each level
  --unique-prompts       start every request with a short prefix of its own, so
                         no request reuses another's cached prefix
  --api-key-env VAR      read a bearer token from environment variable VAR
  --concurrency LIST     levels, comma-separated (default 1,2,5,10,30,70,100,250)
  --rates LIST           open-loop arrival rates in requests per second,
                         comma-separated, instead of --concurrency (e.g. 0.5,1,2,4)
  --burstiness B         shape of the arrivals' gamma gaps: 1 Poisson, below 1
                         bursts, above 1 more even (default 1)
  --max-in-flight N      open loop's safety cap on requests in flight; a request
                         that waits for it is recorded and flags its level
                         (default 4096)
  --requests N|auto      requests per level; auto is max(30, 4×C), or for a
                         rate max(30, 60 s × rate) (default auto)
  --max-tokens N         completion length (default 200)
  --warmup N             unmeasured requests before the first level (default 5)
  --endpoint E           chat or completions (default chat)
  --prompts SPEC         builtin or a JSONL file (default builtin)
  --output-lengths M     max_tokens (every request asks for --max-tokens) or
                         recorded (each prompt's recorded output length, see
                         docs/LOADGEN.md) (default max_tokens)
  --synthetic SPEC       a synthetic set instead of --prompts, drawn from --seed:
                         'count=N input=DIST output=DIST', DIST a length in tokens,
                         uniform(min=A,max=B) or normal(mean=M,sd=S[,min=A][,max=B])
  --temperature T        sampling temperature (default 0)
  --ignore-eos           ask the server to always generate max-tokens
  --repeats N            runs of each level (default 1)
  --seed N               prompt order and arrival schedule seed (default 0)
  --request-timeout D    per-request limit, e.g. 5m (default 10m)
  --out FILE             append every request record to FILE (JSON lines)
  --levels FILE          write the level summaries to FILE (JSON), after each level
  --metrics-dir DIR      save the server's /metrics and /get_server_info scrapes
  --json                 print events as JSON lines instead of text

Exit status: 0 the sweep ran (failed requests are reported, not fatal),
1 every request failed or the sweep was stopped, 2 bad flags.`

func init() {
	register(&command{
		Name:    "sweep",
		Summary: "run a concurrency sweep against an OpenAI-compatible server",
		Usage:   sweepUsage,
		Run:     runSweep,
	})
}

// sweepFlags are the parsed flags of `bakeoff sweep`.
type sweepFlags struct {
	opts      loadgen.Options
	prompts   string
	lengths   string // --output-lengths
	synthetic string // --synthetic
	out       string
	levels    string
	json      bool
	keyEnvVar string
	engine    string
}

func parseSweepFlags(args []string, e *env) (*sweepFlags, error) {
	f := &sweepFlags{}
	o := &f.opts
	var conc, rates, requests string
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprintln(e.Stderr, strings.TrimSpace(sweepUsage)) }
	fs.StringVar(&o.URL, "url", "", "")
	fs.StringVar(&o.Model, "model", "", "")
	fs.StringVar(&f.keyEnvVar, "api-key-env", "", "")
	fs.StringVar(&f.engine, "engine", engine.Generic, "")
	fs.BoolVar(&o.UniquePrompts, "unique-prompts", false, "")

	fs.StringVar(&conc, "concurrency", defaultSweepLevels, "")
	fs.StringVar(&rates, "rates", "", "")
	fs.Float64Var(&o.Burstiness, "burstiness", loadgen.DefaultBurstiness, "")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", loadgen.DefaultMaxInFlight, "")
	fs.StringVar(&requests, "requests", "auto", "")
	fs.IntVar(&o.MaxTokens, "max-tokens", loadgen.DefaultMaxTokens, "")
	fs.IntVar(&o.Warmup, "warmup", defaultSweepWarmup, "")
	fs.StringVar(&o.Endpoint, "endpoint", loadgen.EndpointChat, "")
	fs.StringVar(&f.prompts, "prompts", prompts.Builtin, "")
	fs.StringVar(&f.lengths, "output-lengths", prompts.OutputMaxTokens, "")
	fs.StringVar(&f.synthetic, "synthetic", "", "")
	fs.Float64Var(&o.Temperature, "temperature", 0, "")
	fs.BoolVar(&o.IgnoreEOS, "ignore-eos", false, "")
	fs.IntVar(&o.Repeats, "repeats", 1, "")
	fs.Int64Var(&o.Seed, "seed", 0, "")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", loadgen.DefaultRequestTimeout, "")
	fs.StringVar(&f.out, "out", "", "")
	fs.StringVar(&f.levels, "levels", "", "")
	fs.StringVar(&o.MetricsDir, "metrics-dir", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.URL == "" {
		return nil, usagef("--url is required")
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--url %q: want http://HOST:PORT", o.URL)
	}
	concSet := false
	fs.Visit(func(f *flag.Flag) { concSet = concSet || f.Name == "concurrency" })
	switch {
	case rates != "" && concSet:
		return nil, usagef("--rates and --concurrency: want one of the two")
	case rates != "":
		for _, s := range strings.Split(rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(r >= measure.RateResolution && r <= measure.MaxRate) {
				return nil, usagef("--rates %q: want rates in requests per second (%g to %g) separated by commas", rates, measure.RateResolution, float64(measure.MaxRate))
			}
			o.Rates = append(o.Rates, r)
		}
	default:
		for _, s := range strings.Split(conc, ",") {
			c, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || c < 1 {
				return nil, usagef("--concurrency %q: want positive integers separated by commas", conc)
			}
			o.Concurrency = append(o.Concurrency, c)
		}
	}
	if !(o.Burstiness > 0) {
		return nil, usagef("--burstiness %g: want more than 0", o.Burstiness)
	}
	if o.MaxInFlight < 1 {
		return nil, usagef("--max-in-flight %d: want at least 1", o.MaxInFlight)
	}
	if requests != "auto" {
		n, err := strconv.Atoi(requests)
		if err != nil || n < 1 {
			return nil, usagef("--requests %q: want a positive number or auto", requests)
		}
		o.Requests = n
	}
	switch {
	case o.MaxTokens < 1:
		return nil, usagef("--max-tokens %d: want at least 1", o.MaxTokens)
	case o.Warmup < 0:
		return nil, usagef("--warmup %d: want 0 or more", o.Warmup)
	case o.Repeats < 1:
		return nil, usagef("--repeats %d: want at least 1", o.Repeats)
	case o.RequestTimeout <= 0:
		return nil, usagef("--request-timeout %s: want a positive duration", o.RequestTimeout)
	case o.Temperature < 0:
		return nil, usagef("--temperature %g: want 0 or more", o.Temperature)
	case o.Endpoint != loadgen.EndpointChat && o.Endpoint != loadgen.EndpointCompletions:
		return nil, usagef("--endpoint %q: want chat or completions", o.Endpoint)
	}
	if o.Engine = engine.Lookup(f.engine); o.Engine == nil {
		return nil, usagef("--engine %q: want %s", f.engine, engine.NameList())
	}
	if f.keyEnvVar != "" {
		o.APIKey = e.Getenv(f.keyEnvVar)
		if o.APIKey == "" {
			return nil, usagef("--api-key-env %s: the variable is empty or unset", f.keyEnvVar)
		}
	}
	spec := prompts.Spec{File: f.prompts, OutputLengths: f.lengths}
	if f.lengths == prompts.OutputMaxTokens {
		spec.OutputLengths = ""
	}
	if f.synthetic != "" {
		syn, err := prompts.ParseSynthetic(f.synthetic)
		if err != nil {
			return nil, usagef("--synthetic: %v", err)
		}
		spec.Synthetic = &syn
	}
	set, err := prompts.Make(spec, o.Seed, nil)
	if err != nil {
		return nil, usagef("--prompts: %v", err)
	}
	o.Prompts = set
	return f, nil
}

func runSweep(ctx context.Context, e *env, args []string) int {
	f, err := parseSweepFlags(args, e)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(e.Stderr, "bakeoff sweep:", err)
		}
		return exitBadInput
	}
	tuneGCForMeasurement(e.Getenv)
	o := f.opts

	var out io.WriteCloser
	if f.out != "" {
		file, err := os.OpenFile(f.out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, results.FileMode)
		if err != nil {
			fmt.Fprintln(e.Stderr, "bakeoff sweep:", err)
			return exitBadInput
		}
		defer file.Close()
		out = file
	}
	var r sweepReporter = &textReporter{e: e}
	if f.json {
		r = &jsonReporter{enc: json.NewEncoder(e.Stdout), stderr: e.Stderr}
	}
	r.header(f)

	var levels []measure.LevelSummary
	var levelsErr error
	o.Records = func(rec measure.Record) error {
		if out == nil {
			return nil
		}
		// One write per record, straight to the file: a crash loses at most
		// the requests still in flight.
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = out.Write(append(b, '\n'))
		return err
	}
	o.Events = func(ev loadgen.Event) {
		if ev.Kind == loadgen.EventLevelEnd && ev.Summary != nil {
			levels = append(levels, *ev.Summary)
			if f.levels != "" && levelsErr == nil {
				levelsErr = results.WriteJSONAtomic(f.levels, levels)
			}
		}
		r.event(ev)
	}
	res, err := loadgen.Run(ctx, o)
	if levelsErr != nil && err == nil {
		err = levelsErr
	}
	if res != nil && f.levels != "" && levelsErr == nil && len(levels) == 0 {
		// A sweep stopped before its first level still leaves a levels file,
		// so a reader can tell "ran, measured nothing" from "never ran".
		if werr := results.WriteJSONAtomic(f.levels, []measure.LevelSummary{}); werr != nil && err == nil {
			err = werr
		}
	}
	r.done(res, err)
	switch {
	case err != nil:
		return exitFailed
	case allFailed(res.Levels):
		return exitFailed
	}
	return exitOK
}

// allFailed reports whether no measured request succeeded.
func allFailed(levels []measure.LevelSummary) bool {
	for _, l := range levels {
		if l.OK > 0 {
			return false
		}
	}
	return true
}

// stoppedMessage explains a sweep ended by Ctrl-C or SIGTERM.
const stoppedMessage = "stopped before the end; what was measured is kept"

// sweepReporter draws a sweep's progress.
type sweepReporter interface {
	header(f *sweepFlags)
	event(ev loadgen.Event)
	done(res *loadgen.Result, err error)
}

// textReporter prints for a person: a header, a line per level, a summary.
// On a terminal a progress line is redrawn in place.
type textReporter struct {
	e        *env
	progress bool // a progress line is on screen
}

func (t *textReporter) header(f *sweepFlags) {
	o := f.opts
	req := "auto (" + measure.AutoRule + ")"
	if o.Requests > 0 {
		req = strconv.Itoa(o.Requests)
	}
	fmt.Fprintf(t.e.Stdout, "bakeoff sweep %s  endpoint %s  max-tokens %d  temperature %g  ignore-eos %v\n",
		o.URL, o.Endpoint, o.MaxTokens, o.Temperature, o.IgnoreEOS)
	levels := fmt.Sprint(o.Concurrency)
	if len(o.Rates) > 0 {
		if o.Requests == 0 {
			req = "auto (" + measure.AutoRateRule + ")"
		}
		levels = fmt.Sprintf("rates %v req/s, burstiness %g", o.Rates, o.Burstiness)
	}
	fmt.Fprintf(t.e.Stdout, "levels %s  requests %s  warm-up %d  repeats %d  prompts %s (%d, %s)\n",
		levels, req, o.Warmup, o.Repeats, o.Prompts.Name, len(o.Prompts.Prompts), shortHash(o.Prompts.Hash))
}

func shortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}

func (t *textReporter) clear() {
	if t.progress {
		fmt.Fprint(t.e.Stdout, "\r\033[K")
		t.progress = false
	}
}

func (t *textReporter) event(ev loadgen.Event) {
	switch ev.Kind {
	case loadgen.EventStart:
		fmt.Fprintf(t.e.Stdout, "model %s\n", ev.Message)
	case loadgen.EventWarmup, loadgen.EventProgress:
		if ev.Kind == loadgen.EventWarmup && ev.Done == 0 {
			fmt.Fprintf(t.e.Stdout, "warm-up: %d requests at C=%d\n", ev.Total, ev.Level)
			return
		}
		if !t.e.IsTerminal {
			return
		}
		what := measure.LevelName(ev.Level)
		if ev.Kind == loadgen.EventWarmup {
			what = "warm-up"
		}
		t.clear()
		fmt.Fprintf(t.e.Stdout, "  %s  %d/%d  %.1f tok/s", what, ev.Done, ev.Total, ev.TokPerSec)
		t.progress = true
	case loadgen.EventLevelEnd:
		t.clear()
		fmt.Fprintln(t.e.Stdout, "  "+measure.FormatLevel(*ev.Summary))
		for _, w := range ev.Summary.Warnings {
			fmt.Fprintf(t.e.Stdout, "         note: %s\n", w)
		}
	case loadgen.EventWarning:
		t.clear()
		fmt.Fprintln(t.e.Stderr, "warning:", ev.Message)
	}
}

func (t *textReporter) done(res *loadgen.Result, err error) {
	t.clear()
	if res != nil && len(res.Levels) > 0 {
		best := res.Levels[0]
		var reqs, failed, limited int
		var lag float64
		for _, l := range res.Levels {
			reqs += l.Requests
			failed += l.Failed
			lag = max(lag, l.DispatchLagP99)
			if l.ClientLimited {
				limited++
			}
			if l.Throughput > best.Throughput {
				best = l
			}
		}
		fmt.Fprintf(t.e.Stdout, "summary: %d levels, %d requests, %d failed; peak %.1f tok/s at %s\n",
			len(res.Levels), reqs, failed, best.Throughput, measure.LevelName(best.Level))
		fmt.Fprintf(t.e.Stdout, "client: dispatch lag p99 at most %.2f ms; %d levels possibly client-limited\n", lag*1e3, limited)
		if res.UsageMissing {
			fmt.Fprintln(t.e.Stdout, "note: the server sent no usage; token counts (marked ~) are estimates")
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(t.e.Stderr, "bakeoff sweep:", stoppedMessage)
	case err != nil:
		fmt.Fprintln(t.e.Stderr, "bakeoff sweep:", err)
	case res != nil && allFailed(res.Levels):
		fmt.Fprintln(t.e.Stderr, "bakeoff sweep: every request failed")
	}
}

// jsonReporter prints one JSON object per line: the loadgen events as they
// come, then a final "done" (or "error") object.
// Errors also go to stderr as plain text, the line a caller shows a person.
type jsonReporter struct {
	enc    *json.Encoder
	stderr io.Writer
}

// sweepDone is the last line of `bakeoff sweep --json`.
type sweepDone struct {
	Kind         string   `json:"event"` // "done" or "error"
	Model        string   `json:"model,omitempty"`
	Levels       int      `json:"levels"`
	UsageMissing bool     `json:"usage_missing,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	Message      string   `json:"message,omitempty"`
}

func (j *jsonReporter) header(*sweepFlags)     {}
func (j *jsonReporter) event(ev loadgen.Event) { j.enc.Encode(ev) }
func (j *jsonReporter) done(res *loadgen.Result, err error) {
	d := sweepDone{Kind: "done"}
	if res != nil {
		d.Model, d.Levels, d.UsageMissing, d.Warnings = res.Model, len(res.Levels), res.UsageMissing, res.Warnings
		if err == nil && allFailed(res.Levels) {
			d.Message = "every request failed"
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		d.Kind, d.Message = "error", stoppedMessage
		fmt.Fprintln(j.stderr, "bakeoff sweep:", stoppedMessage)
	case err != nil:
		d.Kind, d.Message = "error", err.Error()
		fmt.Fprintln(j.stderr, "bakeoff sweep:", err)
	}
	j.enc.Encode(d)
}
