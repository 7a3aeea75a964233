package faults

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// Campaign defaults for the fault tests: a sim fast enough that a whole
// campaign takes seconds, with a sweep small enough to check record by record.
const (
	simSpeed       = "50"
	simLoadTime    = "50s" // one second of real time at simSpeed
	defaultPort    = 30000
	defaultLevels  = "1,3"
	defaultRequest = 6
	maxTokens      = 24
	// runTimeout bounds one `bakeoff run`; campaigns here take seconds, so
	// reaching it means something hung, which is itself the failure.
	runTimeout = 6 * time.Minute
	// settleTimeout bounds the wait for a host's processes to be gone.
	settleTimeout = 30 * time.Second
)

// campaignFaultsEnv switches on the campaign-level fault tests. They run
// whole campaigns against namespace hosts and take minutes, so `make faults`
// (which .ci/run runs after `make test`) sets it and `make test` does not.
const campaignFaultsEnv = "BAKEOFF_FAULTS"

func needCampaignFaults(t *testing.T) {
	t.Helper()
	campaigntest.Need(t, campaignFaultsEnv, "campaign faults", "make faults; .ci/run does")
}

// scen is one scenario file of a test campaign.
type scen struct {
	name string
	args map[string]any
	env  map[string]string
}

// spec is a test campaign; zero fields take the defaults above.
type spec struct {
	name      string
	scenarios []scen
	levels    []int
	requests  int
	port      int
	// simFlags go after `bakeoff sim` for every scenario.
	simFlags      []string
	healthTimeout string
	gpuWait       string
	stopGrace     string
	killStrays    bool
	engineEnv     map[string]string
	// ssh overrides the host alias (to point a campaign elsewhere).
	ssh string
	// model and desc go into every scenario (defaults: a plain path, none).
	model, desc string
	// rounds is the campaign's rounds (1 when 0: the faults are about one
	// launch at a time).
	rounds int
}

// rig is a campaign against one namespace host, reached over SSH exactly as
// a user reaches a GPU box: `bakeoff run` with HOME holding the host's alias
// and known_hosts entry.
type rig struct {
	t    *testing.T
	host *testhost.Host
	dir  string // configs/ and scenarios/
	env  []string
	// local runs bakeoff inside the host's namespace with `host: local`
	// instead of over SSH: the same servers and faults, no SSH layer.
	local bool
}

func newRig(t *testing.T, opts ...testhost.Option) *rig {
	t.Helper()
	needCampaignFaults(t)
	h := testhost.New(t, append([]testhost.Option{testhost.WithNvidiaSMI(bakeoffBin)}, opts...)...)
	return &rig{t: t, host: h, dir: campaigntest.NewDir(t), env: campaigntest.Env(t, h.Home)}
}

// write renders s as configs/NAME.yaml and its scenario files; it returns
// the config path.
func (r *rig) write(s spec) string {
	r.t.Helper()
	if s.name == "" {
		s.name = "faults"
	}
	if s.port == 0 {
		s.port = defaultPort
	}
	if len(s.levels) == 0 {
		s.levels = []int{1, 3}
	}
	if s.requests == 0 {
		s.requests = defaultRequest
	}
	or := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	alias := or(s.ssh, r.host.Alias)
	var names []string
	for _, sc := range s.scenarios {
		names = append(names, sc.name)
		doc := map[string]any{"name": sc.name, "engine": "sglang", "model": or(s.model, "/models/sim")}
		if s.desc != "" {
			doc["description"] = s.desc
		}
		args := map[string]any{"tp": 1}
		for k, v := range sc.args {
			args[k] = v
		}
		doc["args"] = args
		if len(sc.env) > 0 {
			doc["env"] = sc.env
		}
		r.writeYAML(filepath.Join("scenarios", sc.name+".yaml"), doc)
	}
	command := append([]string{"{bakeoff}", "sim", "--sim-speed", simSpeed, "--sim-load-time", simLoadTime}, s.simFlags...)
	engine := map[string]any{
		"command":        command,
		"port":           s.port,
		"health_timeout": or(s.healthTimeout, "1m"),
		"poll_interval":  "100ms",
		"stop_grace":     or(s.stopGrace, "3s"),
	}
	if len(s.engineEnv) > 0 {
		engine["env"] = s.engineEnv
	}
	var host any = map[string]any{"ssh": alias, "workdir": r.host.Workdir}
	if r.local {
		host = "local"
	}
	doc := map[string]any{
		"campaign": s.name,
		"host":     host,
		"engine":   engine,
		"gpu": map[string]any{
			"max_used_mib": 1024,
			"wait_timeout": or(s.gpuWait, "20s"),
			"kill_strays":  s.killStrays,
		},
		"sweep": map[string]any{
			"concurrency": s.levels,
			"requests":    s.requests,
			"max_tokens":  maxTokens,
			"warmup":      1,
			"prompts":     "builtin",
			"temperature": 0,
			"ignore_eos":  true,
		},
		"baseline":  names[0],
		"scenarios": names,
		"rounds":    max(s.rounds, 1),
	}
	return r.writeYAML(filepath.Join("configs", s.name+".yaml"), doc)
}

func (r *rig) writeYAML(rel string, doc any) string {
	r.t.Helper()
	return campaigntest.WriteYAML(r.t, r.dir, rel, doc)
}

// result is one finished bakeoff command.
type result struct {
	code           int
	stdout, stderr string
}

func (res result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
}

// command prepares `bakeoff ARGS` in the rig's directory and environment.
func (r *rig) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bakeoffBin, args...)
	cmd.Env = r.env
	if r.local {
		// ip execs bakeoff in place, so cmd's pid is bakeoff's.
		cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", r.host.Name, bakeoffBin}, args...)...)
		cmd.Env = append(slices.Clone(r.env), "PATH="+r.host.BinDir+":"+os.Getenv("PATH"),
			"BAKEOFF_SIM_STATE="+r.host.SimState)
	}
	cmd.Dir = r.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return campaigntest.InGroup(cmd), &stdout, &stderr
}

// bakeoff runs `bakeoff ARGS` to the end.
func (r *rig) bakeoff(args ...string) result {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, stdout, stderr := r.command(ctx, args...)
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	code, exited := campaigntest.ExitCode(err)
	switch {
	case exited:
		res.code = code
	case ctx.Err() != nil:
		r.t.Fatalf("bakeoff %s did not finish within %s\n%s", strings.Join(args, " "), runTimeout, res)
	default:
		r.t.Fatalf("bakeoff %s: %v\n%s", strings.Join(args, " "), err, res)
	}
	for _, p := range panicMarks {
		if strings.Contains(res.stderr+res.stdout, p) {
			r.t.Fatalf("bakeoff %s printed %q:\n%s", strings.Join(args, " "), p, res)
		}
	}
	return res
}

// journal reads a run's journal (a missing one reads as empty).
func journal(t *testing.T, runDir string) []orchestrator.JournalEntry {
	t.Helper()
	es, err := orchestrator.ReadJournal(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		t.Fatalf("reading the journal: %v", err)
	}
	return es
}

// waitJournal polls a run's journal until pred holds for an entry, or the
// process ends first. It returns whether pred held.
var waitJournal = campaigntest.WaitJournal

// phaseStarted matches the start of a scenario's phase.
func phaseStarted(scenario, phase string) func(orchestrator.JournalEntry) bool {
	return func(e orchestrator.JournalEntry) bool {
		return e.Scenario == scenario && e.Phase == phase && e.Event == "start"
	}
}

// outcome is what a test expects of one scenario.
type outcome struct {
	status string // results.StatusOK or StatusFailed
	phase  string // for a failure: the phase it failed in ("" = any)
	reason string // for a failure: text the reason must hold ("" = any)
}

// checkEndState asserts what every fault test promises: each scenario
// completed, or failed with a phase and a reason; each completed scenario's
// requests are all on disk; each scenario ended exactly once in the journal
// (per attempt); nothing is left running on the host.
func (r *rig) checkEndState(runDir string, s spec, want map[string]outcome) {
	r.t.Helper()
	t := r.t
	run, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatalf("reading the run: %v", err)
	}
	got := map[string]results.ScenarioResult{}
	for _, sr := range run.Summary.Scenarios {
		got[sr.Name] = sr
	}
	ends := map[string]int{}
	entries := journal(t, runDir)
	for _, p := range orchestrator.PhaseTimes(entries) {
		t.Logf("phase %-15s %6.1fs (%d×)", p.Phase, p.Seconds, p.Count)
	}
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" &&
			(e.Outcome == orchestrator.OutcomeOK || e.Outcome == orchestrator.OutcomeFailed) {
			ends[e.Scenario]++
		}
	}
	requests := s.requests
	if requests == 0 {
		requests = defaultRequest
	}
	levels := s.levels
	if len(levels) == 0 {
		levels = []int{1, 3}
	}
	for _, sc := range s.scenarios {
		w, ok := want[sc.name]
		if !ok {
			w = outcome{status: results.StatusOK}
		}
		g, ok := got[sc.name]
		if !ok {
			t.Errorf("%s: not in summary.json", sc.name)
			continue
		}
		if g.Status != w.status {
			t.Errorf("%s: status %s (phase %q, reason %q), want %s", sc.name, g.Status, g.FailedPhase, g.Reason, w.status)
			continue
		}
		if ends[sc.name] != 1 {
			t.Errorf("%s: the journal ends it %d times, want exactly once", sc.name, ends[sc.name])
		}
		switch g.Status {
		case results.StatusFailed:
			if g.FailedPhase == "" || g.Reason == "" {
				t.Errorf("%s: failed without a phase or reason: %+v", sc.name, g)
			}
			if w.phase != "" && g.FailedPhase != w.phase {
				t.Errorf("%s: failed at %s (%s), want at %s", sc.name, g.FailedPhase, g.Reason, w.phase)
			}
			if w.reason != "" && !strings.Contains(g.Reason+"\n"+g.LogExcerpt, w.reason) {
				t.Errorf("%s: reason %q (log %q) lacks %q", sc.name, g.Reason, g.LogExcerpt, w.reason)
			}
		case results.StatusOK:
			recs, err := run.Records(sc.name)
			if err != nil {
				t.Errorf("%s: %v", sc.name, err)
				continue
			}
			perLevel := map[measure.Level]int{}
			for _, rec := range recs {
				if !rec.Warmup && rec.OK() {
					perLevel[rec.Level]++
				}
			}
			for _, l := range levels {
				if perLevel[measure.ConcurrencyLevel(l)] != requests {
					t.Errorf("%s: level %d has %d successful records on disk, want %d", sc.name, l, perLevel[measure.ConcurrencyLevel(l)], requests)
				}
			}
		}
	}
	r.checkNothingLeft()
}

// checkNothingLeft waits for the host to hold no process but sshd. A
// campaign stops its servers before it ends, so anything still there after
// settleTimeout was left behind.
func (r *rig) checkNothingLeft() {
	r.t.Helper()
	campaigntest.CheckNothingLeft(r.t, r.host, settleTimeout, "host", nil)
}

// countMeasured counts the successful requests that count in the figures.
func countMeasured(recs []measure.Record) int {
	n := 0
	for _, r := range recs {
		if !r.Warmup && r.OK() {
			n++
		}
	}
	return n
}
