package orchestrator

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/hoststate"
	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Defaults for following a sweep that runs on the host.
const (
	// DefaultSweepPoll is how often the sweep's event log is read.
	DefaultSweepPoll = 250 * time.Millisecond
	// DefaultLinkPatience is how long a dropped link may stay down before
	// the sweep is given up on (the sweep itself runs on regardless), when
	// the campaign's host.link_patience is not set.
	DefaultLinkPatience = campaign.DefaultLinkPatience
)

// Files of a sweep run on the host, inside its directory.
const (
	sweepEvents = "events.log" // the sweep's --json stdout and its stderr
	sweepExit   = "exit-status"
)

// sweepSpec is the campaign's sweep as the load generator takes it, against
// url (a server of engine eng): the one translation of the campaign's sweep
// keys, which the sweep on the host (its command line), the sweep through
// the tunnel, the dry run and the manifest all start from.
func sweepSpec(sw campaign.Sweep, eng, url string) loadgen.Spec {
	return loadgen.Spec{URL: url, Engine: eng, Endpoint: sw.Endpoint,
		Concurrency: sw.Concurrency, Rates: sw.Rates, Burstiness: sw.Burstiness,
		Requests: sw.Requests, MaxTokens: sw.MaxTokens, Warmup: sw.Warmup, Temperature: sw.Temperature,
		IgnoreEOS: sw.IgnoreEOS, Repeats: sw.Repeats, Seed: sw.Seed, RequestTimeout: sw.RequestTimeout,
		UniquePrompts: sw.UniquePrompts, Prompts: sw.PromptSpec(), ScrapeInterval: sw.ScrapeInterval,
		Speeds: sw.Speeds, Trace: sw.Trace, BlockSize: sw.BlockSize, Sessions: sw.Sessions,
		Percentiles: sw.Percentiles}
}

// sweepSpec is this launch's sweep: the campaign's, with the round's
// multiple of the auto request count when a planner set one.
func (s *scenarioRun) sweepSpec() loadgen.Spec {
	spec := sweepSpec(s.o.c.Sweep, s.profile.Name, s.baseURL)
	if s.scale > 1 && spec.Requests == 0 {
		spec.AutoScale = s.scale
	}
	withPrefixCache(&spec, s.o.c.Engine.PrefixCache, s.sc.PrefixCache)
	if s.figuresRole != "" {
		spec.MetricsURL = s.figuresURL
	}
	return spec
}

// withPrefixCache sets what the campaign says of the server's prefix cache
// on spec: the scenario's prefix_cache, else the campaign's
// engine.prefix_cache; neither leaves the engine profile's reset.
func withPrefixCache(spec *loadgen.Spec, campaignWide, own *campaign.PrefixCache) {
	p := own
	if p == nil {
		p = campaignWide
	}
	if p != nil {
		spec.NoPrefixCache, spec.CacheReset, spec.CacheResetCommand = p.None, p.Reset, p.ResetCommand
	}
}

// sweepArgv is the `bakeoff sweep` command line for spec, writing into dir.
// Host mode runs it; --dry-run shows it.
func sweepArgv(bakeoff string, spec loadgen.Spec, dir string) []string {
	spec.Out, spec.Levels = path.Join(dir, results.RequestsFile), path.Join(dir, results.LevelsFile)
	spec.MetricsDir, spec.JSON = path.Join(dir, results.MetricsDir), true
	return append([]string{bakeoff, "sweep"}, spec.Argv()...)
}

// sweep runs the identical load against the server: on the host next to it
// by default, through the tunnel when the host cannot run this binary or the
// campaign asks for it. Afterwards each level's failures are checked.
func sweep(ctx context.Context, s *scenarioRun) error {
	if s.dep != nil {
		defer s.startRoleTimelines(ctx).stop()
	}
	var levels []measure.LevelSummary
	var err error
	hs := &hoststate.Launch{Before: s.hostState(ctx)}
	if s.w.sweepOnHost {
		levels, err = sweepOnHost(ctx, s)
	} else {
		levels, err = sweepTunnel(ctx, s)
	}
	if err == nil {
		hs.After = s.hostState(ctx)
	}
	if hs.Before != nil || hs.After != nil {
		s.result.HostState = hs
	}
	s.result.Levels = levels
	if errors.Is(err, remote.ErrNotRun) {
		// A host that runs nothing (a dry run) has recorded the sweep's
		// command; there is no measurement to check.
		return nil
	}
	if err != nil {
		return err
	}
	return s.checkLevels(ctx, levels)
}

// checkLevels fails the scenario when the server died during the sweep or a
// level lost more than the allowed share of its requests.
func (s *scenarioRun) checkLevels(ctx context.Context, levels []measure.LevelSummary) error {
	if !s.serverAlive(ctx) {
		return s.crashed(ctx, "sweep", "server exited during the sweep", nil)
	}
	if len(levels) == 0 {
		return s.fail("sweep", "the sweep measured no level", "", nil)
	}
	for _, l := range levels {
		if l.Requests == 0 || float64(l.Failed) > s.o.opt.MaxFailedFraction*float64(l.Requests) {
			var classes []string
			for _, k := range slices.Sorted(maps.Keys(l.FailedByClass)) {
				classes = append(classes, fmt.Sprintf("%s %d", k, l.FailedByClass[k]))
			}
			return s.fail("sweep", fmt.Sprintf("%s: %d of %d requests failed (%s)", measure.LevelName(l.Level), l.Failed, l.Requests,
				strings.Join(classes, ", ")), s.logTail(ctx), nil)
		}
	}
	return nil
}

// sweepOnHost runs `bakeoff sweep --json` detached on the host, follows its
// events for progress, and downloads its files when it ends. The sweep does
// not depend on this connection: if the link drops, it keeps measuring and
// the files are fetched once the link is back.
func sweepOnHost(ctx context.Context, s *scenarioRun) ([]measure.LevelSummary, error) {
	o := s.o
	promptsPath := o.c.Sweep.Prompts
	if promptsPath != prompts.Builtin && promptsPath != "" && !o.c.Host.Local {
		promptsPath = path.Join(s.sweepDir, "prompts.jsonl")
	}
	spec := s.sweepSpec()
	spec.Prompts.File = promptsPath
	tracePath := o.c.Sweep.Trace
	if tracePath != "" && !o.c.Host.Local {
		tracePath = path.Join(s.sweepDir, "trace.jsonl")
	}
	spec.Trace = tracePath
	argv := sweepArgv(s.w.hostBakeoff, spec, s.sweepDir)
	eventsPath := path.Join(s.sweepDir, sweepEvents)
	exitPath := path.Join(s.sweepDir, sweepExit)
	// Records and logs are the user's only (umask 077), here as on this side.
	prep := fmt.Sprintf("umask 077 && rm -rf %[1]s && mkdir -p %[1]s && : > %[2]s", campaign.ShellQuote(s.sweepDir),
		campaign.ShellQuote(eventsPath))
	err := s.w.overLink(ctx, s.sc.Name, "preparing the sweep", func(ctx context.Context) error {
		_, _, err := s.w.h.Run(ctx, prep)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("preparing %s on %s: %w", s.sweepDir, s.w.h.Name(), err)
	}
	if promptsPath != o.c.Sweep.Prompts {
		err := s.w.overLink(ctx, s.sc.Name, "uploading the prompt set", func(ctx context.Context) error {
			return s.w.h.Upload(ctx, o.c.Sweep.Prompts, promptsPath)
		})
		if err != nil {
			return nil, fmt.Errorf("uploading the prompt set to %s: %w", s.w.h.Name(), err)
		}
	}
	// A job: its exit status goes to exitPath when it ends.
	if tracePath != o.c.Sweep.Trace {
		err := s.w.overLink(ctx, s.sc.Name, "uploading the trace", func(ctx context.Context) error {
			return s.w.h.Upload(ctx, o.c.Sweep.Trace, tracePath)
		})
		if err != nil {
			return nil, fmt.Errorf("uploading the trace to %s: %w", s.w.h.Name(), err)
		}
	}
	cmd := "umask 077; " + campaign.ShellJoin(argv)
	err = s.w.startOverLink(ctx, s.sc.Name, remote.ProcessSpec{Command: cmd, Dir: s.w.paths.workdir,
		LogFile: eventsPath, PIDFile: s.w.paths.sweepPID, ExitFile: exitPath})
	if err != nil {
		return nil, fmt.Errorf("starting the sweep of %s on %s: %w", s.sc.Name, s.w.h.Name(), err)
	}

	var (
		scan     lineScanner
		offset   int64
		tail     []string
		downFrom time.Time
	)
	follow := func() error {
		data, next, err := remote.ReadFrom(ctx, s.w.h, eventsPath, offset, DefaultLogChunk)
		offset = next
		for _, line := range scan.feed(data) {
			var ev loadgen.Event
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil && ev.Kind != "" {
				s.event(Event{Kind: EventSweep, Phase: "sweep", Sweep: &ev})
				continue
			}
			tail = append(tail, line)
			if len(tail) > DefaultLogTailLines {
				tail = tail[1:]
			}
		}
		return err
	}
	for {
		err := follow()
		var alive bool
		if err == nil {
			alive, err = remote.Alive(ctx, s.w.h, s.w.paths.sweepPID)
		}
		if ctx.Err() != nil {
			return s.fetchSweep(context.WithoutCancel(ctx), true), ctx.Err()
		}
		if err != nil {
			// A dropped link: the host reconnects on a later call while the
			// detached sweep keeps running; only a long outage gives up.
			if downFrom.IsZero() {
				downFrom = o.now()
				s.warn(fmt.Sprintf("following the sweep on %s: %v; retrying", s.w.h.Name(), err))
			}
			if o.now().Sub(downFrom) > o.linkPatience {
				return nil, fmt.Errorf("following the sweep on %s: link down for %s: %w", s.w.h.Name(), o.linkPatience, err)
			}
		} else {
			downFrom = time.Time{}
			if !alive {
				break
			}
			// The server dying mid-sweep ends the scenario now, not after
			// every remaining request has failed.
			if !s.serverAlive(ctx) {
				_ = remote.Stop(ctx, s.w.h, s.w.paths.sweepPID, o.c.Engine.StopGrace)
				levels := s.fetchSweep(ctx, true)
				return levels, s.crashed(ctx, "sweep", "server exited during the sweep", nil)
			}
		}
		if err := pause.For(ctx, DefaultSweepPoll); err != nil {
			return s.fetchSweep(context.WithoutCancel(ctx), true), err
		}
	}
	_ = follow()
	var code string
	err = s.w.overLink(ctx, s.sc.Name, "reading the sweep's exit status", func(ctx context.Context) error {
		var err error
		code, err = remote.ExitStatus(ctx, s.w.h, exitPath)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the sweep's exit status on %s: %w", s.w.h.Name(), err)
	}
	levels := s.fetchSweep(ctx, code != "0")
	if code != "0" {
		if code == "" {
			code = "unknown (killed?)"
		}
		reason := fmt.Sprintf("bakeoff sweep on %s exited with status %s", s.w.h.Name(), code)
		if n := len(tail); n > 0 {
			reason += ": " + tail[n-1]
		}
		return levels, s.fail("sweep", reason, strings.Join(tail, "\n"), nil)
	}
	if levels == nil {
		return nil, s.fail("sweep", "the sweep wrote no "+results.LevelsFile, strings.Join(tail, "\n"), nil)
	}
	return levels, nil
}

// fetchSweep downloads the sweep's files into the scenario's directory and
// returns its level summaries (nil when there are none). Partial files of an
// interrupted sweep are kept too: nothing measured is thrown away.
func (s *scenarioRun) fetchSweep(ctx context.Context, partial bool) []measure.LevelSummary {
	if partial {
		// Stopping the sweep first lets it write what it measured.
		if err := s.stopOverLink(ctx, s.w.paths.sweepPID); err != nil {
			s.warn(err.Error())
		}
	}
	if err := os.MkdirAll(s.dir, results.DirMode); err != nil {
		s.warn(err.Error())
		return nil
	}
	for _, name := range []string{results.RequestsFile, results.LevelsFile} {
		err := s.w.overLink(ctx, s.sc.Name, "downloading "+name, func(ctx context.Context) error {
			return s.w.h.Download(ctx, path.Join(s.sweepDir, name), filepath.Join(s.dir, name))
		})
		if err != nil && !partial {
			s.warn(fmt.Sprintf("downloading %s of %s: %v", name, s.sc.Name, err))
		}
		setResultMode(filepath.Join(s.dir, name))
	}
	err := s.w.overLink(ctx, s.sc.Name, "downloading the sweep's metrics", func(ctx context.Context) error {
		return downloadDir(ctx, s.w.h, path.Join(s.sweepDir, results.MetricsDir), filepath.Join(s.dir, results.MetricsDir))
	})
	if err != nil {
		s.warn(err.Error())
	}
	var levels []measure.LevelSummary
	data, err := os.ReadFile(filepath.Join(s.dir, results.LevelsFile))
	if err != nil {
		return nil
	}
	if err := json.Unmarshal(data, &levels); err != nil {
		s.warn(fmt.Sprintf("reading %s of %s: %v", results.LevelsFile, s.sc.Name, err))
		return nil
	}
	return levels
}

// downloadDir copies the plain files of a host directory (one level deep);
// a missing directory copies nothing.
func downloadDir(ctx context.Context, h remote.Host, dir, local string) error {
	out, _, err := h.Run(ctx, fmt.Sprintf("if [ -d %[1]s ]; then cd %[1]s && for f in *; do [ -f \"$f\" ] && printf '%%s\\n' \"$f\"; done; fi; true",
		campaign.ShellQuote(dir)))
	if err != nil {
		return fmt.Errorf("listing %s on %s: %w", dir, h.Name(), err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name := sc.Text()
		if name == "" || strings.Contains(name, "/") {
			continue
		}
		if err := os.MkdirAll(local, results.DirMode); err != nil {
			return err
		}
		if err := h.Download(ctx, path.Join(dir, name), filepath.Join(local, name)); err != nil {
			return fmt.Errorf("downloading %s from %s: %w", path.Join(dir, name), h.Name(), err)
		}
		setResultMode(filepath.Join(local, name))
	}
	return nil
}

// sweepTunnel runs the load generator in this process, its connections
// dialed through the host: the fallback when the host cannot run this binary.
func sweepTunnel(ctx context.Context, s *scenarioRun) ([]measure.LevelSummary, error) {
	spec := s.sweepSpec()
	spec.MetricsDir = filepath.Join(s.dir, results.MetricsDir)
	opts, err := spec.Options()
	if err != nil {
		return nil, fmt.Errorf("preparing the sweep of %s: %w", s.sc.Name, err)
	}
	if err := os.MkdirAll(s.dir, results.DirMode); err != nil {
		return nil, fmt.Errorf("creating %s: %w", s.dir, err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, results.RequestsFile), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, results.FileMode)
	if err != nil {
		return nil, fmt.Errorf("creating the records file: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	opts.Client = s.client
	// Through the tunnel the sweep runs here, but a reset command clears
	// the cache of a server on the host: it runs there.
	opts.RunCommand = func(ctx context.Context, cmd string) error {
		_, stderr, err := s.w.h.Run(ctx, cmd)
		if err != nil && len(stderr) > 0 {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(stderr)))
		}
		return err
	}
	opts.Records = func(r measure.Record) error { return enc.Encode(r) }
	opts.Events = func(e loadgen.Event) { s.event(Event{Kind: EventSweep, Phase: "sweep", Sweep: &e}) }
	res, runErr := loadgen.Run(ctx, opts)
	err = errors.Join(w.Flush(), f.Sync(), f.Close())
	if err != nil {
		return nil, fmt.Errorf("writing the records of %s: %w", s.sc.Name, err)
	}
	var levels []measure.LevelSummary
	if res != nil {
		levels = res.Levels
		for _, w := range res.Warnings {
			s.warn(w)
		}
		if werr := results.WriteJSONAtomic(filepath.Join(s.dir, results.LevelsFile), levels); werr != nil {
			return levels, werr
		}
	}
	if runErr != nil {
		return levels, fmt.Errorf("sweeping %s through %s: %w", s.sc.Name, s.w.h.Name(), runErr)
	}
	return levels, nil
}

// setResultMode gives a downloaded file the mode the results package writes
// it with (results.SetMode): user-only when it may hold secrets (the server
// log), else readable as the local umask allows. A download keeps the host
// file's mode, which the host's umask 077 made user-only.
func setResultMode(path string) {
	_ = results.SetMode(path)
}

// hostState reads the host's load and, on a host with GPUs, their state
// (hoststate.Command); nil when the load cannot be read. It never fails the
// launch: a host without /proc/loadavg is measured all the same, only not
// compared on its load, and GPUs nvidia-smi does not answer for are a
// warning, once. A launch sharing its host keeps only its own GPUs.
func (s *scenarioRun) hostState(ctx context.Context) *hoststate.State {
	smi := ""
	if !s.o.c.GPU.None {
		smi = cmp.Or(s.o.c.GPU.NvidiaSMI, remote.DefaultNvidiaSMI)
	}
	out, _, err := s.w.h.Run(ctx, hoststate.Command(smi))
	if err != nil {
		return nil
	}
	st, err := hoststate.Parse(string(out))
	if gerr := (*hoststate.GPUError)(nil); errors.As(err, &gerr) {
		s.w.warnOnce(s.sc.Name, fmt.Sprintf("reading the GPUs' state on %s (%s --query-gpu): %v; the launches are not judged on their GPUs' clocks",
			s.w.h.Name(), smi, gerr.Err))
	} else if err != nil {
		return nil
	}
	st.KeepGPUs(s.slotGPUs(s.w))
	return &st
}
