package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// deployPorts are a deployment's ports in a test: the prefill and decode
// workers', the prefill worker's bootstrap server and the router's (the
// world's own port).
type deployPorts struct{ prefill, decode, bootstrap, router int }

func newDeployPorts(t *testing.T, w *world) deployPorts {
	return deployPorts{prefill: freePort(t), decode: freePort(t), bootstrap: freePort(t), router: w.port}
}

// disaggScenario writes a scenario of prefill and decode workers behind the
// sim's router, with SGLang's flags: the router is `bakeoff sim router`
// with sglang_router's command line. extra is more YAML under the decode
// role's args.
func (w *world) disaggScenario(name string, p deployPorts, decodeArgs ...string) {
	w.t.Helper()
	w.disaggScenarioRouter(name, p, `"{bakeoff}", sim, router`, decodeArgs...)
}

// disaggScenarioRouter is disaggScenario with the router role's program
// (the words of its launch before sglang_router's flags, as YAML flow
// items).
func (w *world) disaggScenarioRouter(name string, p deployPorts, router string, decodeArgs ...string) {
	w.t.Helper()
	decode := ""
	for _, a := range decodeArgs {
		decode += "\n        " + a
	}
	text := fmt.Sprintf(`name: %s
engine: sglang
model: /models/test
args:
  tp: 1
  enable-metrics: true
  max-running-requests: 64
deployment:
  serve: router
  roles:
    prefill:
      port: %d
      args:
        disaggregation-mode: prefill
        disaggregation-bootstrap-port: %d
    decode:
      port: %d
      args:
        disaggregation-mode: decode%s
    router:
      port: %d
      launch: [%s, --pd-disaggregation,
        --prefill, "http://{prefill.host}:{prefill.port}", "%d",
        --decode, "http://{decode.host}:{decode.port}",
        --host, "{host}", --port, "{port}"]
`, name, p.prefill, p.bootstrap, p.decode, decode, p.router, router, p.bootstrap)
	if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// checkPortsFree fails when a process still listens on one of the ports,
// as seen in /proc/net/tcp: the world's own check knows its one port.
func checkPortsFree(t *testing.T, ports ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var held []int
		raw, _ := os.ReadFile("/proc/net/tcp")
		raw6, _ := os.ReadFile("/proc/net/tcp6")
		table := string(raw) + string(raw6)
		for _, p := range ports {
			// Local address :PORT in hex, in state 0A (listen).
			if strings.Contains(table, fmt.Sprintf(":%04X 00000000:0000 0A", p)) ||
				strings.Contains(table, fmt.Sprintf(":%04X 00000000000000000000000000000000:0000 0A", p)) {
				held = append(held, p)
			}
		}
		if len(held) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("ports still listened on after the campaign: %v", held)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDeploymentDisaggLocal runs a disaggregated deployment (prefill and
// decode workers behind the router) against an aggregated server, end to
// end on this machine: both measured, every role's log and metrics kept,
// every role stopped.
func TestDeploymentDisaggLocal(t *testing.T) {
	w := newWorld(t)
	p := newDeployPorts(t, w)
	w.scenario("agg", "")
	w.disaggScenario("disagg", p)
	w.writeConfig(campaignOpts{scenarios: []string{"agg", "disagg"}})
	out, events, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPortsFree(t, p.prefill, p.decode, p.bootstrap, p.router)
	if out.Failed != 0 || out.Canceled {
		for _, r := range out.Results {
			t.Logf("%s: %s %s: %s\n%s", r.Name, r.Status, r.FailedPhase, r.Reason, r.LogExcerpt)
		}
		t.Fatalf("failed %d, canceled %v", out.Failed, out.Canceled)
	}
	run := readSummary(t, out.RunDir)
	d := scenarioResult(t, run, "disagg")
	if len(d.Levels) != 2 {
		t.Fatalf("disagg measured %d levels, want 2", len(d.Levels))
	}
	recs, err := run.Records("disagg")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+2*8 {
		t.Errorf("disagg: %d records, want warm-up 1 + 2 levels × 8", len(recs))
	}
	for _, r := range recs {
		if r.Error != "" {
			t.Errorf("disagg: a request failed through the router: %s", r.Error)
			break
		}
	}
	// The router serves no /metrics and its server info is the prefill
	// worker's: the engine's figures are read from the decode worker, and
	// the result says so.
	if d.EngineVersion == "" || d.FiguresFrom != "decode" {
		t.Errorf("disagg: engine version %q, figures from %q: want the decode worker's", d.EngineVersion, d.FiguresFrom)
	}
	// The final scrape is the decode worker's (the router has no
	// /metrics): it counts the level's requests, every one decoded there.
	prom, err := os.ReadFile(filepath.Join(out.RunDir, "disagg", "round-1", results.MetricsDir, orchestrator.FinalMetricsFile))
	if err != nil || !strings.Contains(string(prom), "sglang:num_requests_total") {
		t.Errorf("disagg: no final scrape of the decode worker's metrics (%v)", err)
	}
	for _, role := range []string{"prefill", "decode", "router"} {
		if !strings.Contains(d.Launch, role+" on local: env -- ") {
			t.Errorf("the launch does not show role %s:\n%s", role, d.Launch)
		}
		dir := filepath.Join(out.RunDir, "disagg", "round-1", "roles", role)
		if fi, err := os.Stat(filepath.Join(dir, results.ServerLog)); err != nil || fi.Size() == 0 {
			t.Errorf("role %s: no log kept (%v)", role, err)
		}
	}
	for _, role := range []string{"prefill", "decode"} {
		dir := filepath.Join(out.RunDir, "disagg", "round-1", "roles", role, results.MetricsDir)
		if _, err := os.Stat(filepath.Join(dir, orchestrator.FinalMetricsFile)); err != nil {
			t.Errorf("role %s: no final metrics: %v", role, err)
		}
		// Each worker's own timeline through the sweep, beside the
		// router's, which the sweep keeps.
		f, err := os.Open(filepath.Join(dir, timeline.File))
		if err != nil {
			t.Errorf("role %s: no timeline: %v", role, err)
			continue
		}
		tl, err := timeline.Read(f)
		f.Close()
		if err != nil || len(tl.Times) < 2 {
			t.Errorf("role %s: a timeline of %d scrapes (%v), want the sweep's", role, len(tl.Times), err)
		}
	}
	// Each role's stop is journaled, the router's first.
	var stopped []string
	for _, e := range journal(t, out.RunDir) {
		if e.Scenario == "disagg" && e.Event == orchestrator.EventStopped && e.Phase == "stop" && e.Stop != nil {
			stopped = append(stopped, e.Stop.PIDFile)
		}
	}
	if want := []string{"server-router.pid", "server-prefill.pid", "server-decode.pid"}; !slices.Equal(stopped, want) {
		t.Errorf("stops journaled %v, want %v", stopped, want)
	}
	var readyLines []string
	for _, e := range events {
		if e.Scenario == "disagg" && e.Kind == orchestrator.EventWaiting && strings.HasSuffix(e.Message, " ready on local") {
			readyLines = append(readyLines, e.Message)
		}
	}
	if want := []string{"prefill ready on local", "decode ready on local", "router ready on local"}; !slices.Equal(readyLines, want) {
		t.Errorf("readiness %v, want %v (the router starts once its workers are ready)", readyLines, want)
	}
}

// TestDeploymentRoleDiesWhileLoading: a worker that dies while loading fails
// the launch at ready with that role's reason and log; the roles that did
// start are stopped, and the router, which waits for its workers, never
// starts.
func TestDeploymentRoleDiesWhileLoading(t *testing.T) {
	w := newWorld(t)
	p := newDeployPorts(t, w)
	w.scenario("agg", "")
	w.disaggScenario("disagg", p, "sim-fault: die-during-load")
	w.writeConfig(campaignOpts{scenarios: []string{"agg", "disagg"}})
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPortsFree(t, p.prefill, p.decode, p.bootstrap, p.router)
	run := readSummary(t, out.RunDir)
	d := scenarioResult(t, run, "disagg")
	if d.Status != results.StatusFailed || d.FailedPhase != string(orchestrator.StepReady) {
		t.Fatalf("disagg: %s at %s (%s), want failed at ready", d.Status, d.FailedPhase, d.Reason)
	}
	// The dying worker writes its error line and exits: which of the two
	// the watch sees first is a race, and either names the role.
	if !strings.HasPrefix(d.Reason, "role decode on local: server exited while loading") &&
		!strings.HasPrefix(d.Reason, "role decode on local: server failed while loading") {
		t.Errorf("reason %q, want it to name role decode, failed or exited while loading", d.Reason)
	}
	if d.LogExcerpt == "" {
		t.Errorf("no log excerpt of the decode worker")
	}
	if s := scenarioResult(t, run, "agg"); s.Status != results.StatusOK {
		t.Errorf("agg: %s (%s)", s.Status, s.Reason)
	}
	if _, err := os.Stat(filepath.Join(out.RunDir, "disagg", "round-1", "roles", "router", results.ServerLog)); err == nil {
		t.Errorf("the router has a log: it was started although a worker never became ready")
	}
}

// TestDeploymentCanceledWhileLoading: Ctrl-C while the roles load stops
// every one of them.
func TestDeploymentCanceledWhileLoading(t *testing.T) {
	w := newWorld(t)
	p := newDeployPorts(t, w)
	w.disaggScenario("disagg", p)
	w.scenario("agg", "")
	w.writeConfig(campaignOpts{scenarios: []string{"disagg", "agg"}, speed: 1, healthTimeout: "2m"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	out, _, err := w.runInProcess(ctx, orchestrator.Options{Events: func(e orchestrator.Event) {
		if e.Kind == orchestrator.EventWaiting && strings.Contains(e.Message, " started on ") {
			started++
			if started == 2 { // both workers load; the router waits for them
				cancel()
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Canceled {
		t.Fatalf("not canceled: %+v", out.Results)
	}
	checkPortsFree(t, p.prefill, p.decode, p.bootstrap, p.router)
	for _, pid := range w.leftovers() {
		t.Errorf("process %d left after Ctrl-C", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	var stopped []string
	for _, e := range journal(t, out.RunDir) {
		if e.Event == orchestrator.EventStopped && e.Stop != nil {
			stopped = append(stopped, e.Stop.PIDFile+" "+strconv.Itoa(len(e.Stop.Signals)))
		}
	}
	if !slices.Contains(stopped, "server-prefill.pid 1") || !slices.Contains(stopped, "server-decode.pid 1") {
		t.Errorf("stops journaled %v, want both workers stopped with SIGTERM", stopped)
	}
}

// TestDeploymentPreflight: the preflight checks each role's flags as the
// role runs them: a decode worker's bad --disaggregation-mode stops the run
// before any launch, at the role's line.
func TestDeploymentPreflight(t *testing.T) {
	w := newWorld(t)
	p := newDeployPorts(t, w)
	w.scenario("agg", "")
	w.disaggScenario("disagg", p, "disaggregation-transfer-backend: mooncak")
	w.writeConfig(campaignOpts{scenarios: []string{"agg", "disagg"}})
	run := filepath.Join(w.root, "run")
	out, err := w.bakeoff("run", w.config, "--out", run).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\n%s", err, out)
	}
	want := filepath.Join(w.scenDir, "disagg.yaml") + `:20:9: scenario disagg.decode: invalid choice for --disaggregation-transfer-backend: "mooncak"`
	if !strings.Contains(string(out), want) {
		t.Errorf("the run's output does not say %q:\n%s", want, out)
	}
	checkNothingLaunched(t, run)
}
