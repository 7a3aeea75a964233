package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/results"
)

// sweepUsage is the help of `bakeoff sweep`; the engines it names are the
// engine room's, so a new engine appears here without an edit.
func sweepUsage() string {
	return strings.NewReplacer("{engines}", engine.NameList(), "{levels}", loadgen.DefaultSweepLevels,
		"{warmup}", strconv.Itoa(loadgen.DefaultSweepWarmup)).Replace(sweepUsageText)
}

const sweepUsageText = `
Usage: bakeoff sweep --url URL [flags]

Runs a closed-loop concurrency sweep against an OpenAI-compatible streaming
server: a warm-up, then for each level exactly C requests in flight until the
level's requests are done. With --rates it is an open loop instead: each
level's requests arrive at a rate, on a schedule drawn in advance from the
seed, however many are still in flight. With --speeds and --trace it replays a
timed trace: each level sends every row at its timestamp divided by the speed.
Prints one line per level as it ends, then a
summary. Token counts come from the server's usage; TTFT, TPOT and steady-
state throughput are explained in docs/LOADGEN.md.

Flags:
  --url URL              server base URL (required), e.g. http://127.0.0.1:30000
  --model M              model name (default: the first id from /v1/models)
  --engine E             the server's engine (default generic): how to read its
                         accept length and clear its prefix cache before each
                         level; one of {engines}
  --unique-prompts       start every request with a short prefix of its own, so
                         no request reuses another's cached prefix
  --no-prefix-cache      the server keeps no prefix cache: nothing to clear
  --cache-reset CALL     clear the prefix cache before each level with this HTTP
                         call ("POST /path") instead of the engine's own
  --cache-reset-command CMD
                         clear it with this shell command instead
  --api-key-env VAR      read a bearer token from environment variable VAR
  --concurrency LIST     levels, comma-separated (default {levels})
  --rates LIST           open-loop arrival rates in requests per second,
                         comma-separated, instead of --concurrency (e.g. 0.5,1,2,4)
  --speeds LIST          replay --trace at these multiples of its recorded pace,
                         comma-separated, instead of --concurrency (e.g. 0.5,1,2)
  --trace FILE           a JSONL trace: Mooncake's {timestamp (ms), input_length,
                         output_length, hash_ids} or {timestamp, prompt, max_tokens}
  --block-size N         tokens per hash id of the trace (default 512)
  --burstiness B         shape of the arrivals' gamma gaps: 1 Poisson, below 1
                         bursts, above 1 more even (default 1)
  --max-in-flight N      open loop's safety cap on requests in flight; a request
                         that waits for it is recorded and flags its level
                         (default 4096)
  --requests N|auto      requests per level; auto is max(30, 4×C), or for a
                         rate max(30, 60 s × rate) (default auto)
  --max-tokens N         completion length (default 200)
  --percentiles LIST     the percentiles --levels gives each latency at,
                         e.g. p50,p90,p99.9 (default p50,p90,p95,p99); the
                         live line keeps p50/p99
  --warmup N             unmeasured requests before the first level (default {warmup})
  --endpoint E           chat or completions (default chat)
  --prompts SPEC         builtin or a JSONL file (default builtin)
  --output-lengths M     max_tokens (every request asks for --max-tokens) or
                         recorded (each prompt's recorded output length, see
                         docs/LOADGEN.md) (default max_tokens)
  --synthetic SPEC       a synthetic set instead of --prompts, drawn from --seed:
                         'count=N input=DIST output=DIST', DIST a length in tokens,
                         uniform(min=A,max=B) or normal(mean=M,sd=S[,min=A][,max=B])
  --sessions SPEC        multi-turn sessions drawn from --seed, each turn resending
                         the history: 'turns=DIST think_ms=DIST first=prompts|DIST
                         follow_up=prompts|DIST' (think_ms in milliseconds, first
                         and follow_up message lengths in tokens); the levels are
                         then users, or sessions per second (docs/LOADGEN.md)
  --temperature T        sampling temperature (default 0)
  --ignore-eos           ask the server to always generate max-tokens
  --repeats N            runs of each level (default 1)
  --seed N               prompt order and arrival schedule seed (default 0)
  --request-timeout D    per-request limit, e.g. 5m (default 10m)
  --out FILE             append every request record to FILE (JSON lines)
  --levels FILE          write the level summaries to FILE (JSON), after each level
  --metrics-dir DIR      save the server's /metrics and info-call scrapes,
                         and its timeline (timeline.jsonl)
  --scrape-interval D    how often /metrics is read for the timeline (default 1s)
  --json                 print events as JSON lines instead of text

Exit status: 0 the sweep ran (failed requests are reported, not fatal),
1 every request failed or the sweep was stopped, 2 bad flags.`

func init() {
	register(&command{
		Name:    "sweep",
		Summary: "run a concurrency sweep against an OpenAI-compatible server",
		Usage:   sweepUsage(),
		Run:     runSweep,
	})
}

// sweepFlags are the parsed flags of `bakeoff sweep`: the sweep as its
// command line says it, and the options Run gets from it.
type sweepFlags struct {
	spec loadgen.Spec
	opts loadgen.Options
}

func parseSweepFlags(args []string, e *env) (*sweepFlags, error) {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() { fmt.Fprintln(e.Stderr, strings.TrimSpace(sweepUsage())) }
	spec, err := loadgen.ParseArgv(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	f := &sweepFlags{spec: spec}
	if f.opts, err = spec.Options(); err != nil {
		return nil, usagef("--prompts: %v", err)
	}
	if spec.APIKeyEnv != "" {
		f.opts.APIKey = e.Getenv(spec.APIKeyEnv)
		if f.opts.APIKey == "" {
			return nil, usagef("--api-key-env %s: the variable is empty or unset", spec.APIKeyEnv)
		}
	}
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
	if f.spec.Out != "" {
		file, err := os.OpenFile(f.spec.Out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, results.FileMode)
		if err != nil {
			fmt.Fprintln(e.Stderr, "bakeoff sweep:", err)
			return exitBadInput
		}
		defer file.Close()
		out = file
	}
	var r sweepReporter = &textReporter{e: e}
	if f.spec.JSON {
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
			if f.spec.Levels != "" && levelsErr == nil {
				levelsErr = results.WriteJSONAtomic(f.spec.Levels, levels)
			}
		}
		r.event(ev)
	}
	res, err := loadgen.Run(ctx, o)
	if levelsErr != nil && err == nil {
		err = levelsErr
	}
	if res != nil && f.spec.Levels != "" && levelsErr == nil && len(levels) == 0 {
		// A sweep stopped before its first level still leaves a levels file,
		// so a reader can tell "ran, measured nothing" from "never ran".
		if werr := results.WriteJSONAtomic(f.spec.Levels, []measure.LevelSummary{}); werr != nil && err == nil {
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
	if o.Trace != nil {
		req = fmt.Sprintf("%d (the trace's rows)", len(o.Trace.Rows))
		levels = fmt.Sprintf("speeds %v× of trace %s (%s)", o.Speeds, o.Trace.Name, shortHash(o.Trace.Hash))
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
			fmt.Fprintf(t.e.Stdout, "warm-up: %d requests at %s\n", ev.Total, ev.Level)
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
