package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/results"
)

// step is one named phase of a scenario's lifecycle. A gpu step is about
// the host's GPUs and is left out, with no journal line, on a host that has
// none (gpu: none).
type step struct {
	name StepName
	run  func(ctx context.Context, s *scenarioRun) error
	gpu  bool
}

func (s step) String() string { return string(s.name) }

// lifecycle is a scenario from a clean host to its measurements. The first
// step that fails ends the scenario (never the campaign); teardown runs after
// it in every case.
var lifecycle = []step{
	// A server left by an earlier scenario, campaign or killed orchestrator
	// holds the port and the GPUs; nothing measured next to it is honest.
	{name: StepStopOld, run: stopOld},
	// Launching while memory is still held ends in CUDA out of memory, often
	// minutes into loading.
	{name: StepGPUFree, run: waitGPUFree, gpu: true},
	// Detached (setsid, log file, pid file) so a dropped link leaves it running.
	{name: StepLaunch, run: launch},
	// Health 503 means loading; a dead process or a fatal log line fails fast.
	{name: StepReady, run: waitReady},
	// Healthy servers can still crash on the first real request.
	{name: StepSmoke, run: smoke},
	// GPU power beside the sweep, for energy per token; never fails.
	{name: StepPower, run: startPower},
	// The identical load every scenario gets.
	{name: StepSweep, run: sweep},
	// Engine version (its profile's info call), accept length and raw
	// metrics, while the server is up.
	{name: StepCollect, run: collect},
}

// teardown leaves the host clean for the next scenario, whatever happened.
var teardown = []step{
	// The server goes before anything else, so a failure never leaves it up.
	{name: StepStop, run: stopServer},
	// The power sampler goes with the server; its readings become energy.
	{name: StepPowerStop, run: stopPower},
	// The complete log, shutdown lines included, for the record.
	{name: StepSaveLog, run: saveLog},
	// The next scenario must start on free GPUs; a holder is named here.
	{name: StepGPUFreeAfter, run: waitGPUFree, gpu: true},
}

// ScenarioError is a failed scenario: which phase, why, and the server log's
// tail when the server had something to say.
type ScenarioError struct {
	Scenario string
	Host     string
	Phase    StepName
	Reason   string
	LogTail  string
	Err      error
}

func (e *ScenarioError) Error() string {
	return fmt.Sprintf("scenario %s on %s failed at %s: %s", e.Scenario, e.Host, e.Phase, e.Reason)
}

func (e *ScenarioError) Unwrap() error { return e.Err }

// hostPaths are the files the lifecycle keeps in the host's workdir. One
// server runs per host at a time, so its pid file has a fixed name that a
// later campaign (or a resumed one) finds.
type hostPaths struct {
	workdir   string
	serverPID string
	sweepPID  string
	logs      string
	sweeps    string
	bin       string
	// slotTag names the files of a slot of a shared host apart ("" on a
	// host that runs one launch at a time).
	slotTag string
}

func newHostPaths(workdir string) hostPaths {
	return hostPaths{
		workdir:   workdir,
		serverPID: path.Join(workdir, "server.pid"),
		sweepPID:  path.Join(workdir, "sweep.pid"),
		logs:      path.Join(workdir, "logs"),
		sweeps:    path.Join(workdir, "sweeps"),
		bin:       path.Join(workdir, "bin", "bakeoff"),
	}
}

// scenarioRun is one attempt at one launch: a scenario in a round.
type scenarioRun struct {
	o       *orch
	w       *worker // the host it runs on
	sc      *campaign.Scenario
	profile *engine.Profile // the scenario's engine
	round   int             // 1-based
	pos     int             // 0-based position in the campaign's launch sequence
	attempt int
	dir     string // local results directory: SCENARIO/round-K
	launch  *campaign.Launch
	// serverLog is the engine's log on the host; logOffset how much of it
	// the ready phase has read.
	serverLog string
	logOffset int64
	sweepDir  string // on the host
	client    *http.Client
	baseURL   string
	// figures is where the engine's own figures are read (its /metrics and
	// info call): baseURL's server, unless a deployment serves from a
	// router, and then the engine role behind it (figuresRole).
	figuresURL    string
	figuresClient *http.Client
	figuresRole   string
	model         string
	result        results.ScenarioResult
	keptServer    bool
	power         *powerRun // nil when no sampler runs
	// hostLost says why the fleet gives up the host during this attempt
	// ("" when it does not): the attempt is then not the scenario's.
	hostLost string
	// scale, when above 1, multiplies the `auto` request count of this
	// launch's sweep (a sequential campaign's planner).
	scale int
	// step is the step running now, for the journal lines a step writes
	// beside its start and end (a stop's signals).
	step StepName
	// dep is the launch's processes when the scenario is a deployment
	// (deployment.go); nil for one server.
	dep *deployRun
}

func (o *orch) newScenarioRun(pl plannedLaunch, w *worker) *scenarioRun {
	sc := pl.sc
	o.mu.Lock()
	o.attempts[pl.key]++
	attempt := o.attempts[pl.key]
	o.mu.Unlock()
	s := &scenarioRun{
		o: o, w: w, sc: sc, profile: sc.Profile(), round: pl.key.Round, pos: pl.pos, attempt: attempt,
		dir:       filepath.Join(o.runDir, filepath.FromSlash(results.LaunchDir(sc.Name, pl.key.Round))),
		serverLog: path.Join(w.paths.logs, sc.Name+".log"),
		sweepDir:  path.Join(w.paths.sweeps, sc.Name),
		client:    hostHTTPClient(w.h),
		baseURL:   fmt.Sprintf("http://127.0.0.1:%d", o.c.Engine.Port),
	}
	if sc.Deployment != nil {
		// The load, the smoke request and the info call go to the role
		// the deployment serves from.
		s.dep = s.newDeployRun()
		s.baseURL, s.client = s.dep.serve.url, s.dep.serve.client
	}
	s.figuresURL, s.figuresClient = s.baseURL, s.client
	if s.dep != nil && s.dep.figures != nil && s.dep.figures != s.dep.serve {
		f := s.dep.figures
		s.figuresURL, s.figuresClient, s.figuresRole = f.url, f.client, f.name
	}
	return s
}

func (s *scenarioRun) event(e Event) {
	e.Time = s.o.now()
	e.Scenario = s.sc.Name
	e.Round = s.round
	e.Rounds = len(s.o.man.Order)
	e.Index = s.pos + 1
	e.Total = len(s.o.launches)
	e.Host = s.w.tag
	s.o.emit(e)
}

func (s *scenarioRun) fail(phase StepName, reason, tail string, err error) *ScenarioError {
	return &ScenarioError{Scenario: s.sc.Name, Host: s.w.h.Name(), Phase: phase, Reason: reason, LogTail: tail, Err: err}
}

// runScenario runs the lifecycle and the teardown and returns the attempt's
// result, also written to summary.json.
func (o *orch) runScenario(ctx context.Context, s *scenarioRun) results.ScenarioResult {
	start := o.now()
	s.result = results.ScenarioResult{Name: s.sc.Name, Round: s.round, Status: results.StatusPending,
		Attempt: s.attempt, Fingerprint: o.man.Fingerprint, Started: start.UTC(),
		PhaseSeconds: map[string]float64{}, Dir: results.LaunchDir(s.sc.Name, s.round), HostName: s.w.id()}
	s.event(Event{Kind: EventScenarioStart})
	o.journal(JournalEntry{Time: start, Scenario: s.sc.Name, Round: s.round, Attempt: s.attempt,
		Phase: PhaseScenario, Event: "start", Host: s.w.tag})
	var warns []string
	o.mu.Lock()
	moved, err := o.archiveAttempt(s.sc.Name, s.round, s.attempt-1)
	if err != nil {
		warns = append(warns, err.Error())
	}
	if err := os.MkdirAll(s.dir, results.DirMode); err != nil {
		warns = append(warns, err.Error())
	}
	// The summary learns at once where the earlier attempts went, so
	// that a kill during this one still leaves them findable.
	s.result.History = o.history(s.sc.Name, s.round, s.attempt-1, moved)
	if err := o.recordResult(s.result); err != nil {
		warns = append(warns, err.Error())
	}
	o.mu.Unlock()
	for _, msg := range warns {
		s.warn(msg)
	}

	var failed error
	for _, st := range lifecycle {
		if o.skips(st) {
			continue
		}
		if err := s.phase(ctx, st); err != nil {
			failed = err
			break
		}
	}
	// In a fleet, a failure may be the host's: then the round moves, and
	// a host that no longer answers has nothing teardown could reach.
	if o.fleet && failed != nil && ctx.Err() == nil {
		s.hostLost = o.hostFailure(ctx, s, failed)
	}
	// Teardown runs even after Ctrl-C: a detached server must not outlive
	// the campaign unless asked. It gets its own deadline instead.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTeardownTimeout)
	defer cancel()
	for _, st := range teardown {
		if s.w.unreachable && !s.groupReachable() {
			s.warn(fmt.Sprintf("%s is unreachable: its server may still run there; the next campaign on it stops it first (pid file %s)",
				s.w.h.Name(), s.w.paths.serverPID))
			break
		}
		if st.name == StepStop && o.opt.KeepServer && failed == nil && s.pos == o.lastPos {
			s.keptServer = true
			continue
		}
		if st.gpu && s.keptServer {
			continue // the kept server holds the GPUs on purpose
		}
		if o.skips(st) {
			continue
		}
		if err := s.phase(tctx, st); err != nil {
			// The measurement stands; the next scenario's own gpu-free
			// will refuse to launch while the holder remains.
			s.warn(err.Error())
		}
	}

	end := o.now()
	s.result.Ended = end.UTC()
	outcome := OutcomeOK
	var se *ScenarioError
	switch {
	case failed == nil:
		s.result.Status = results.StatusOK
	case s.hostLost != "":
		s.result.Status = results.StatusPending
		s.result.Reason = fmt.Sprintf("host %s lost: %s", s.w.h.Name(), s.hostLost)
		if se := (*ScenarioError)(nil); errors.As(failed, &se) {
			s.result.FailedPhase, s.result.LogExcerpt = string(se.Phase), se.LogTail
		}
		outcome = OutcomeHostLost
	case ctx.Err() != nil:
		s.result.Status = results.StatusPending
		s.result.Reason = "interrupted: " + failed.Error()
		outcome = OutcomeCanceled
	case errors.As(failed, &se):
		s.result.Status = results.StatusFailed
		s.result.FailedPhase, s.result.Reason, s.result.LogExcerpt = string(se.Phase), se.Reason, se.LogTail
		outcome = OutcomeFailed
	default:
		s.result.Status = results.StatusFailed
		s.result.Reason = failed.Error()
		outcome = OutcomeFailed
	}
	e := JournalEntry{Time: end, Scenario: s.sc.Name, Round: s.round, Attempt: s.attempt, Phase: PhaseScenario,
		Event: "end", Outcome: outcome, DurationS: end.Sub(start).Seconds(), Host: s.w.tag}
	if failed != nil {
		e.Error = failed.Error()
	}
	own := s.result
	own.History = nil // each earlier attempt has its own result.json
	if err := results.WriteJSONAtomic(filepath.Join(s.dir, results.ResultFile), own); err != nil {
		o.noteLocalWrite(err)
		s.warn(err.Error())
	}
	o.mu.Lock()
	err = o.recordResult(s.result)
	o.mu.Unlock()
	if err != nil {
		o.noteLocalWrite(err)
		s.warn(err.Error())
	}
	// A scenario that failed because its results could not be written
	// locally failed for the campaign's sake, not the server's.
	o.noteLocalWrite(failed)
	if serr := o.storageFailure(); serr != nil && outcome != OutcomeCanceled {
		// Its result may be missing from summary.json, so the journal must
		// not call it done: --resume runs it again once space is back. A
		// journal line can still fit on a disk too full for a JSON file.
		outcome = OutcomeCanceled
		e.Outcome = outcome
		if e.Error == "" {
			e.Error = "results could not be written: " + serr.Error()
		}
	}
	if outcome == OutcomeOK || outcome == OutcomeFailed {
		key := LaunchKey{s.sc.Name, s.round}
		o.mu.Lock()
		o.finished[key], o.finishedOn[key] = outcome, s.w.tag
		o.launchSecs = append(o.launchSecs, e.DurationS)
		o.mu.Unlock()
	}
	// The journal's end line comes last: once it says "done", every file the
	// scenario wrote is already on disk.
	o.journal(e)
	res := s.result
	s.event(Event{Kind: EventScenarioEnd, Outcome: outcome, Result: &res, Err: failed})
	return s.result
}

// skips says whether st is left out of this campaign: a GPU step on a host
// without a GPU. The stop still waits for the server's processes to exit,
// and the launch still refuses a port something else holds.
func (o *orch) skips(st step) bool { return st.gpu && o.c.GPU.None }

// phase runs one step with its journal lines and events. A plain error from
// a step becomes a ScenarioError for that phase.
func (s *scenarioRun) phase(ctx context.Context, st step) error {
	o := s.o
	start := o.now()
	o.journal(JournalEntry{Time: start, Scenario: s.sc.Name, Round: s.round, Attempt: s.attempt, Phase: string(st.name),
		Event: "start", Host: s.w.tag})
	s.event(Event{Kind: EventPhaseStart, Phase: st.name})
	s.step = st.name
	err := st.run(ctx, s)
	var se *ScenarioError
	if err != nil && !errors.As(err, &se) {
		err = s.fail(st.name, err.Error(), "", err)
	}
	end := o.now()
	d := end.Sub(start)
	outcome := outcomeOf(ctx, err)
	e := JournalEntry{Time: end, Scenario: s.sc.Name, Round: s.round, Attempt: s.attempt, Phase: string(st.name),
		Event: "end", Outcome: outcome, DurationS: d.Seconds(), Host: s.w.tag}
	if err != nil {
		e.Error = err.Error()
	}
	o.journal(e)
	if st.name == StepReady && err == nil {
		o.loadedOn(s)
	}
	s.result.PhaseSeconds[string(st.name)] += d.Seconds()
	s.event(Event{Kind: EventPhaseEnd, Phase: st.name, Outcome: outcome, Duration: d, Err: err})
	return err
}
