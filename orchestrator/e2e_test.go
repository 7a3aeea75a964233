package orchestrator_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/llamatest"
	"github.com/bakeoff-dev/bakeoff/internal/testbin"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// bakeoffBin is the real bakeoff binary, built once for every test: the
// engine (bakeoff sim), the sweep and, for the CLI tests, the orchestrator.
var bakeoffBin string

func TestMain(m *testing.M) {
	// Asked to stand in for llama.cpp's llama-server: serve instead of testing.
	if llamatest.Main() {
		return
	}
	bin, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bakeoffBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// world is one test's private machine state: a campaign directory, a sim
// state directory read by the fake nvidia-smi on PATH, a workdir (through
// TMPDIR, which the local host's default workdir follows) and a free port.
type world struct {
	t       *testing.T
	root    string
	config  string
	port    int
	env     []string // for child orchestrators
	scenDir string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, root: root, port: freePort(t), scenDir: filepath.Join(root, "scenarios")}
	for _, d := range []string{"bin", "tmp", "sim-state", "scenarios", "configs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bakeoffBin, filepath.Join(root, "bin", "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "bin") + ":" + os.Getenv("PATH")
	t.Setenv("PATH", path)
	t.Setenv("BAKEOFF_SIM_STATE", filepath.Join(root, "sim-state"))
	t.Setenv("TMPDIR", filepath.Join(root, "tmp"))
	w.env = append(os.Environ(), "PATH="+path, "BAKEOFF_SIM_STATE="+filepath.Join(root, "sim-state"),
		"TMPDIR="+filepath.Join(root, "tmp"))
	t.Cleanup(func() { w.checkNoLeftovers() })
	return w
}

func freePort(t *testing.T) int { return testbin.FreePort(t) }

// scenario writes scenarios/NAME.yaml; extra is YAML appended under args.
func (w *world) scenario(name, extends string, args ...string) {
	w.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	if extends != "" {
		fmt.Fprintf(&b, "extends: %s\n", extends)
	} else {
		b.WriteString("engine: sglang\nmodel: /models/test\n")
	}
	b.WriteString("args:\n")
	if extends == "" {
		b.WriteString("  tp: 2\n  enable-metrics: true\n  max-running-requests: 64\n")
	}
	for _, a := range args {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// campaignOpts tune the campaign file a test writes.
type campaignOpts struct {
	scenarios     []string
	healthTimeout string
	gpuWait       string
	killStrays    bool
	requests      int
	concurrency   string
	maxTokens     int
	speed         int
	host          string // the host block; "host: local" when empty
	nvidiaSMI     string
	engineEnv     string // YAML mapping body under engine.env
	rounds        int    // 1 when 0: most tests are about one launch
	noGPU         bool   // gpu: none in place of the gpu block
	sweepExtra    string // more keys under sweep:, each line indented by two spaces
	extra         string // more top-level keys, each line ending in a newline
}

func (w *world) writeConfig(o campaignOpts) string {
	w.t.Helper()
	if o.healthTimeout == "" {
		o.healthTimeout = "30s"
	}
	if o.gpuWait == "" {
		o.gpuWait = "10s"
	}
	if o.requests == 0 {
		o.requests = 8
	}
	if o.concurrency == "" {
		o.concurrency = "[1, 4]"
	}
	if o.maxTokens == 0 {
		o.maxTokens = 32
	}
	if o.speed == 0 {
		o.speed = 200
	}
	if o.host == "" {
		o.host = "host: local"
	}
	if o.rounds == 0 {
		o.rounds = 1
	}
	gpu := fmt.Sprintf("gpu:\n  max_used_mib: 1024\n  wait_timeout: %s\n  kill_strays: %v\n", o.gpuWait, o.killStrays)
	if o.nvidiaSMI != "" {
		gpu += fmt.Sprintf("  nvidia_smi: %q\n", o.nvidiaSMI)
	}
	if o.noGPU {
		gpu = "gpu: none\n"
	}
	extraEngine := ""
	if o.engineEnv != "" {
		extraEngine = "  env:\n" + o.engineEnv
	}
	cfg := fmt.Sprintf(`campaign: e2e
%s
engine:
  command: [%q, "sim", "--sim-speed", "%d", "--sim-load-time", "20s"]
  port: %d
  health_timeout: %s
  poll_interval: 100ms
  stop_grace: 5s
%s%ssweep:
  concurrency: %s
  requests: %d
  max_tokens: %d
  warmup: 1
%sbaseline: %s
scenarios: [%s]
rounds: %d
%s`, o.host, "{bakeoff}", o.speed, w.port, o.healthTimeout, extraEngine, gpu, o.concurrency, o.requests, o.maxTokens,
		o.sweepExtra, o.scenarios[0], strings.Join(o.scenarios, ", "), o.rounds, o.extra)
	w.config = filepath.Join(w.root, "configs", "e2e.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return w.config
}

// runInProcess runs the campaign through the orchestrator package; the
// events are returned, and passed on to opt.Events as they come when set.
func (w *world) runInProcess(ctx context.Context, opt orchestrator.Options) (*orchestrator.Outcome, []orchestrator.Event, error) {
	w.t.Helper()
	c, err := campaign.Load(w.config)
	if err != nil {
		w.t.Fatal(err)
	}
	var mu sync.Mutex
	var events []orchestrator.Event
	opt.Campaign = c
	if opt.Host == nil {
		opt.Host = remote.NewLocal()
	}
	opt.Bakeoff = bakeoffBin
	opt.Machine, opt.PID = "test-machine", os.Getpid()
	also := opt.Events
	opt.Events = func(e orchestrator.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		if also != nil {
			also(e)
		}
	}
	if opt.OutDir == "" && opt.ResumeDir == "" {
		opt.OutDir = filepath.Join(w.root, "run")
	}
	out, err := orchestrator.Run(ctx, opt)
	return out, events, err
}

// bakeoff starts the real CLI with this world's environment.
func (w *world) bakeoff(args ...string) *exec.Cmd {
	cmd := exec.Command(bakeoffBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.root
	return cmd
}

// detail is `bakeoff report DIR --format text --detail`: the notes in full
// and each level's figures, which the end of a run leaves to the report.
func (w *world) detail(dir string) string {
	w.t.Helper()
	out, err := w.bakeoff("report", dir, "--format", "text", "--detail").CombinedOutput()
	if err != nil {
		w.t.Fatalf("bakeoff report %s --detail: %v\n%s", dir, err, out)
	}
	return string(out)
}

// checkNoLeftovers fails the test if a process it started (a sim, its
// schedulers, a sweep) is still running, and kills those by pid.
func (w *world) checkNoLeftovers() {
	pids := w.leftovers()
	if len(pids) == 0 {
		return
	}
	w.t.Errorf("processes left running: %v", pids)
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

func (w *world) leftovers() []int {
	var out []int
	port := strconv.Itoa(w.port)
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !(bytes.Contains(raw, []byte(bakeoffBin)) || bytes.Contains(raw, []byte(w.root))) {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		mine := false
		for i, a := range args {
			if strings.Contains(a, w.root) || strings.Contains(a, "127.0.0.1:"+port) ||
				(a == "--port" && i+1 < len(args) && args[i+1] == port) {
				mine = true
			}
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			mine = false // a zombie is gone, only not yet reaped
		}
		if mine {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, pid)
		}
	}
	return out
}

func readSummary(t *testing.T, dir string) *results.Run {
	t.Helper()
	run, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func scenarioResult(t *testing.T, run *results.Run, name string) results.ScenarioResult {
	t.Helper()
	for _, s := range run.Summary.Scenarios {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %s in summary of %s", name, run.Dir)
	return results.ScenarioResult{}
}

func journal(t *testing.T, dir string) []orchestrator.JournalEntry {
	t.Helper()
	e, err := orchestrator.ReadJournal(filepath.Join(dir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// scenarioEnds counts the journal's scenario end lines per scenario and outcome.
func scenarioEnds(entries []orchestrator.JournalEntry) map[string]int {
	out := map[string]int{}
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" {
			out[e.Scenario+":"+e.Outcome]++
		}
	}
	return out
}

// TestDemoCampaignLocal runs the shipped scenarios (baseline, EAGLE-3 topk
// 4, topk 1 spec v2) against the sim on this machine, end to end.
func TestDemoCampaignLocal(t *testing.T) {
	w := newWorld(t)
	for _, n := range []string{"baseline", "eagle3-topk4", "eagle3-topk1-specv2"} {
		data, err := os.ReadFile(filepath.Join("..", "scenarios", n+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// TP 8 would start eight scheduler processes per server; two do.
		data = bytes.Replace(data, []byte("tp-size: 8"), []byte("tp-size: 2"), 1)
		if err := os.WriteFile(filepath.Join(w.scenDir, n+".yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.writeConfig(campaignOpts{scenarios: []string{"baseline", "eagle3-topk4", "eagle3-topk1-specv2"}})
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed != 0 || out.Canceled {
		t.Fatalf("failed %d, canceled %v: %+v", out.Failed, out.Canceled, out.Results)
	}
	run := readSummary(t, out.RunDir)
	if got := len(run.Summary.Scenarios); got != 3 {
		t.Fatalf("summary has %d scenarios, want 3", got)
	}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK || len(s.Levels) != 2 {
			t.Errorf("%s: status %s, %d levels", s.Name, s.Status, len(s.Levels))
		}
		for _, f := range []string{results.RequestsFile, results.LevelsFile, results.ServerLog, "result.json"} {
			if fi, err := os.Stat(filepath.Join(out.RunDir, s.Name, "round-1", f)); err != nil || fi.Size() == 0 {
				t.Errorf("%s/%s: missing or empty (%v)", s.Name, f, err)
			}
		}
		recs, err := run.Records(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1+2*8 {
			t.Errorf("%s: %d records, want warm-up 1 + 2 levels × 8", s.Name, len(recs))
		}
		if s.EngineVersion == "" {
			t.Errorf("%s: no engine version collected", s.Name)
		}
		if s.Fingerprint != run.Manifest.Fingerprint {
			t.Errorf("%s: fingerprint %s, manifest %s", s.Name, s.Fingerprint, run.Manifest.Fingerprint)
		}
	}
	if s := scenarioResult(t, run, "eagle3-topk4"); s.AcceptLength == nil {
		t.Errorf("eagle3-topk4: no accept length collected")
	}
	if len(run.Manifest.Host.GPUs) == 0 {
		t.Errorf("manifest has no GPU facts: %+v", run.Manifest.Host)
	}
	entries := journal(t, out.RunDir)
	ends := scenarioEnds(entries)
	for _, n := range []string{"baseline", "eagle3-topk4", "eagle3-topk1-specv2"} {
		if ends[n+":ok"] != 1 {
			t.Errorf("journal: %s ended ok %d times", n, ends[n+":ok"])
		}
	}
	// Each server's stop is journaled in its step: one SIGTERM, and the sim
	// exits on it, well within the grace.
	stops := map[string]*orchestrator.StopRecord{}
	for _, e := range entries {
		if e.Event == orchestrator.EventStopped && e.Phase == "stop" && e.Stop != nil && e.Stop.PIDFile == "server.pid" {
			stops[e.Scenario] = e.Stop
		}
	}
	for _, n := range []string{"baseline", "eagle3-topk4", "eagle3-topk1-specv2"} {
		st := stops[n]
		if st == nil {
			t.Errorf("journal: no stop of %s's server", n)
			continue
		}
		if !slices.Equal(st.Signals, []string{"TERM"}) || len(st.WaitsS) != 1 || st.PID <= 1 || st.TookS <= 0 {
			t.Errorf("journal: %s's server stopped as %+v, want one SIGTERM and its wait", n, st)
		}
	}
	var sawLevel, sawLog bool
	for _, e := range events {
		sawLevel = sawLevel || (e.Kind == orchestrator.EventSweep && e.Sweep.Kind == "level_end")
		sawLog = sawLog || e.Kind == orchestrator.EventServerLog
	}
	if !sawLevel || !sawLog {
		t.Errorf("events: level_end seen %v, server log line seen %v", sawLevel, sawLog)
	}
	if _, err := os.Stat(filepath.Join(w.root, "tmp", campaign.LocalWorkdirPrefix+strconv.Itoa(os.Getuid()), orchestrator.LockFile)); err == nil {
		t.Errorf("the host lock was left behind")
	}
}
