package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// fleetLinkPatience is host.link_patience in the fleet tests: how long a cut
// host is waited for before its round moves. Short, so the test is too; the
// ssh config below makes a dead link show within seconds.
const fleetLinkPatience = "8s"

// fleetSSHConfig comes first in the fleet's ssh config, so its values win
// over each host's stanza: a dead link is noticed after about 3 s and a
// reconnect to a host that is gone gives up within seconds.
const fleetSSHConfig = `Host *
  ServerAliveInterval 1
  ServerAliveCountMax 3
  ConnectTimeout 2
`

// fleetRig is a campaign over several namespace hosts, all reached from one
// HOME, each with the sim and its fake nvidia-smi. The hosts share this
// machine's filesystem, so the workdir names the host ({host}).
type fleetRig struct {
	*rig
	hosts   []*testhost.Host
	workdir string
}

func newFleetRig(t *testing.T, n int) *fleetRig {
	t.Helper()
	needCampaignFaults(t)
	f := &fleetRig{}
	for range n {
		f.hosts = append(f.hosts, testhost.New(t, testhost.WithNvidiaSMI(bakeoffBin)))
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(fleetSSHConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range f.hosts {
		if err := h.AddToHome(home); err != nil {
			t.Fatal(err)
		}
	}
	f.workdir = filepath.Join(t.TempDir(), "{host}")
	f.rig = &rig{t: t, host: f.hosts[0], dir: campaigntest.NewDir(t), env: campaigntest.Env(t, home)}
	return f
}

// write renders s as the rig does, then makes it a fleet: hosts: with every
// host's alias, host: with the shared workdir and link patience.
func (f *fleetRig) write(s spec) string {
	f.t.Helper()
	path := f.rig.write(s)
	raw, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		f.t.Fatal(err)
	}
	var aliases []string
	for _, h := range f.hosts {
		aliases = append(aliases, h.Alias)
	}
	doc["hosts"] = aliases
	doc["host"] = map[string]any{"workdir": f.workdir, "link_patience": fleetLinkPatience}
	return f.writeYAML(filepath.Join("configs", s.name+".yaml"), doc)
}

// hostOf returns the host with this alias.
func (f *fleetRig) hostOf(alias string) *testhost.Host {
	for _, h := range f.hosts {
		if h.Alias == alias {
			return h
		}
	}
	f.t.Fatalf("no host %q in the fleet", alias)
	return nil
}

// nothingLeftOn waits for a host to hold no process but sshd, like
// checkNothingLeft.
func (f *fleetRig) nothingLeftOn(h *testhost.Host) {
	f.t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for {
		ps, err := h.Processes(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Errorf("processes left on %s after the campaign: %+v", h.Alias, ps)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logPhases logs where a run's time went, phase by phase, as checkEndState
// does: the fleet tests run close to runTimeout on a loaded machine, and
// this says which phase grew.
func (f *fleetRig) logPhases(runDir string) {
	f.t.Helper()
	for _, p := range orchestrator.PhaseTimes(journal(f.t, runDir)) {
		f.t.Logf("phase %-15s %6.1fs (%d×, %.1fs each)", p.Phase, p.Seconds, p.Count, p.Seconds/float64(max(p.Count, 1)))
	}
}

// checkCounted checks every launch the verdict counts: complete, with all
// its measured requests on disk, and, within a round, on one host. It
// returns the host of each round.
func (f *fleetRig) checkCounted(run *results.Run, s spec) map[int]string {
	f.t.Helper()
	t := f.t
	roundHost := map[int]string{}
	for _, sc := range s.scenarios {
		ls := run.Launches(sc.name)
		if len(ls) != s.rounds {
			t.Errorf("%s: %d launches, want %d", sc.name, len(ls), s.rounds)
		}
		for _, l := range ls {
			if l.Result.Status != results.StatusOK {
				t.Errorf("%s round %d: %s (%s)", sc.name, l.Round, l.Result.Status, l.Result.Reason)
				continue
			}
			if h, ok := roundHost[l.Round]; ok && h != l.Result.HostName {
				t.Errorf("round %d ran on %s and on %s", l.Round, h, l.Result.HostName)
			}
			roundHost[l.Round] = l.Result.HostName
			recs, err := run.LaunchRecords(l)
			if err != nil {
				t.Errorf("%s round %d: %v", sc.name, l.Round, err)
				continue
			}
			perLevel := map[measure.Level]int{}
			for _, rec := range recs {
				if !rec.Warmup && rec.OK() {
					perLevel[rec.Level]++
				}
			}
			for _, lv := range s.levels {
				if perLevel[measure.ConcurrencyLevel(lv)] != s.requests {
					t.Errorf("%s round %d: level %d has %d successful records, want %d", sc.name, l.Round, lv, perLevel[measure.ConcurrencyLevel(lv)], s.requests)
				}
			}
		}
	}
	return roundHost
}

// TestFleetHostCutMidRound runs three rounds over three namespace hosts
// and cuts one host's link for good while it sweeps the first launch of
// its round: the campaign finishes on the other two, the cut host's round
// runs again whole on one of them (its attempt on the cut host kept in
// history), no measured request is lost, the verdict computes, and no
// process is left on the hosts that answer. On the cut host nothing starts
// after the cut; once its link is back, the next campaign there stops what
// the cut left running.
func TestFleetHostCutMidRound(t *testing.T) {
	t.Parallel()
	f := newFleetRig(t, 3)
	s := spec{name: "fleet-cut", scenarios: []scen{{name: "a"}, {name: "b"}}, levels: []int{1, 3}, requests: 6,
		rounds: 3, healthTimeout: "1m"}
	cfg := f.write(s)
	out := filepath.Join(f.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	done, wait := f.runInBackground(ctx, "run", cfg, "--out", out)

	// The first launch of a round is the first scenario of the round's
	// order: cutting there leaves the round's second launch to come.
	var cut orchestrator.JournalEntry
	firstOfRound := func(e orchestrator.JournalEntry) bool {
		if e.Phase != "sweep" || e.Event != "start" || e.Host == "" {
			return false
		}
		want := "a"
		if e.Round == 2 {
			want = "b" // round 2 runs the reverse order
		}
		if e.Scenario == want {
			cut = e
			return true
		}
		return false
	}
	if !waitJournal(ctx, out, done, firstOfRound) {
		t.Fatalf("the run ended before any round's first sweep: %s", wait())
	}
	victim := f.hostOf(cut.Host)
	victim.LinkDown()
	before, err := victim.Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cut %s during %s round %d", victim.Alias, cut.Scenario, cut.Round)

	res := wait()
	if res.code != 0 {
		t.Fatalf("want exit 0 with two hosts left, got %s", res)
	}
	for _, want := range []string{"Rounds by host:", "Hosts lost:", victim.Alias + " during round " + fmt.Sprint(cut.Round),
		fmt.Sprintf("(moved from %s)", victim.Alias)} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the end report lacks %q:\n%s", want, res.stdout)
		}
	}

	run, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	f.logPhases(out)
	roundHost := f.checkCounted(run, s)
	if h := roundHost[cut.Round]; h == "" || h == victim.Alias {
		t.Errorf("round %d counts launches of %q, want another host's", cut.Round, h)
	}
	// The cut host's attempt is kept, in the history of its launch.
	moved := false
	for _, sr := range run.Summary.Scenarios {
		for _, h := range sr.History {
			moved = moved || (sr.Name == cut.Scenario && sr.RoundOf() == cut.Round && h.HostName == victim.Alias)
		}
	}
	if !moved {
		t.Errorf("%s round %d: no attempt on %s in its history", cut.Scenario, cut.Round, victim.Alias)
	}
	lost := 0
	for _, e := range journal(t, out) {
		if e.Phase == orchestrator.PhaseHost && e.Event == orchestrator.HostLost {
			lost++
			if e.Host != victim.Alias || e.Round != cut.Round || !strings.Contains(e.Error, "unreachable") {
				t.Errorf("host line %+v, want %s unreachable in round %d", e, victim.Alias, cut.Round)
			}
		}
	}
	if lost != 1 {
		t.Errorf("%d host-lost lines, want 1", lost)
	}
	if rep := f.bakeoff("report", out, "--format", "text", "--detail"); rep.code != 0 || !strings.Contains(rep.stdout, "3 rounds") {
		t.Errorf("bakeoff report: %s", rep)
	}
	for _, h := range f.hosts {
		if h != victim {
			f.nothingLeftOn(h)
		}
	}
	// Nothing was started on the cut host after the cut.
	after, err := victim.Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range after {
		if !slices.ContainsFunc(before, func(b testhost.Process) bool { return b.Pid == p.Pid }) {
			t.Errorf("%s: pid %d (%s) started after the cut", victim.Alias, p.Pid, p.Cmdline)
		}
	}

	// The link back, one launch there stops what the cut left running.
	victim.LinkUp()
	one := spec{name: "fleet-after", scenarios: []scen{{name: "a"}}, levels: []int{1}, requests: 2, rounds: 1}
	f.hosts = []*testhost.Host{victim}
	again := f.bakeoff("run", f.write(one), "--out", filepath.Join(f.dir, "after"))
	if again.code != 0 {
		t.Fatalf("a campaign on %s after its link came back: %s", victim.Alias, again)
	}
	f.nothingLeftOn(victim)
}

// TestFleetInterrupt sends SIGINT while every host of a fleet runs a
// launch: each host's server is stopped (nothing left on any host), the
// run is resumable, and the resume finishes it with each round on one host.
func TestFleetInterrupt(t *testing.T) {
	t.Parallel()
	f := newFleetRig(t, 3)
	s := spec{name: "fleet-int", scenarios: []scen{{name: "a"}, {name: "b"}}, levels: []int{1}, requests: 6, rounds: 3}
	cfg := f.write(s)
	out := filepath.Join(f.dir, "run")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, stdout, stderr := f.command(ctx, "run", cfg, "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	busy := map[string]bool{}
	sweeping := func(e orchestrator.JournalEntry) bool {
		if e.Phase == "sweep" && e.Event == "start" && e.Host != "" {
			busy[e.Host] = true
		}
		return len(busy) == len(f.hosts)
	}
	if !waitJournal(ctx, out, ended, sweeping) {
		<-ended
		t.Fatalf("the run ended before every host swept: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), stdout, stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ended
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stdout.String(), "Interrupted. Resume with:") {
		t.Fatalf("after SIGINT: exit %d, want 1 and the resume command\n%s\n%s", code, stdout, stderr)
	}
	for _, h := range f.hosts {
		f.nothingLeftOn(h)
	}
	res := f.bakeoff("run", cfg, "--resume", out)
	if res.code != 0 {
		t.Fatalf("resume: %s", res)
	}
	f.logPhases(out)
	run, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	f.checkCounted(run, s)
	for _, h := range f.hosts {
		f.nothingLeftOn(h)
	}
}

// TestFleetGPUsHeld: on one host of two, a process the campaign did not
// start holds GPU memory. That host's first launch waits gpu.wait_timeout
// and fails at gpu-free: the host is given up on (not the scenario), and its
// round runs on the other host, after the other's own round.
func TestFleetGPUsHeld(t *testing.T) {
	t.Parallel()
	f := newFleetRig(t, 2)
	held := f.hosts[0]
	// A stranger's server in the held host's namespace, registered in its
	// fake GPUs.
	stray := exec.Command("ip", "netns", "exec", held.Name, bakeoffBin, "sim", "--sim-speed", "50", "--sim-load-time", "1s",
		"--model-path", "/m", "--tp", "1", "--host", "127.0.0.1", "--port", "31000")
	stray.Env = append(os.Environ(), "BAKEOFF_SIM_STATE="+held.SimState)
	stray.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	// testhost takes the schedulers it left in the namespace; the stranger
	// itself is ours to stop.
	t.Cleanup(func() { syscall.Kill(-stray.Process.Pid, syscall.SIGKILL); stray.Wait() })
	deadline := time.Now().Add(settleTimeout)
	for {
		holders, _ := filepath.Glob(filepath.Join(held.SimState, "holder-*.json"))
		if len(holders) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stranger never held GPU memory on %s", held.Alias)
		}
		time.Sleep(50 * time.Millisecond)
	}

	s := spec{name: "fleet-gpu", scenarios: []scen{{name: "a"}, {name: "b"}}, levels: []int{1}, requests: 6, rounds: 2,
		gpuWait: "3s"}
	res := f.bakeoff("run", f.write(s), "--out", filepath.Join(f.dir, "run"))
	if res.code != 0 {
		t.Fatalf("want exit 0 with one host left, got %s", res)
	}
	run, err := results.ReadRun(filepath.Join(f.dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	f.logPhases(filepath.Join(f.dir, "run"))
	for round, h := range f.checkCounted(run, s) {
		if h != f.hosts[1].Alias {
			t.Errorf("round %d counts launches of %s, want %s", round, h, f.hosts[1].Alias)
		}
	}
	lost := 0
	for _, e := range journal(t, filepath.Join(f.dir, "run")) {
		if e.Phase == orchestrator.PhaseHost {
			lost++
			if e.Host != held.Alias || !strings.Contains(e.Error, "gpu-free failed before") || !strings.Contains(e.Error, "held by pid") {
				t.Errorf("host line %+v, want %s lost at gpu-free, naming the holder", e, held.Alias)
			}
		}
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" && e.Outcome == orchestrator.OutcomeFailed {
			t.Errorf("%s round %d failed: %s; the host's failure is not the scenario's", e.Scenario, e.Round, e.Error)
		}
	}
	if lost != 1 {
		t.Errorf("%d host-lost lines, want 1", lost)
	}
	f.nothingLeftOn(f.hosts[1])
}

// TestFleetOnly runs a campaign over a fleet one scenario at a time with
// --only, one host down from the start: the rounds run across the two hosts
// that answer, the second scenario's launches (--only b --into) go to each
// round's host, a rerun of the first (--only a --into) too, its earlier
// attempt kept in history, and the run reads as a single host's would: every
// launch counted, complete, each round on one host. The host that is down is
// recorded each time (a host line, the manifest, "not used" at the end),
// beside the facts of the hosts that ran.
func TestFleetOnly(t *testing.T) {
	t.Parallel()
	f := newFleetRig(t, 3)
	down := f.hosts[2]
	down.LinkDown()
	s := spec{name: "fleet-only", scenarios: []scen{{name: "a"}, {name: "b"}}, levels: []int{1}, requests: 4, rounds: 2}
	cfg := f.write(s)
	out := filepath.Join(f.dir, "run")

	// where gives each round's host from the results of scenario name.
	where := func(name string) map[int]string {
		t.Helper()
		run, err := results.ReadRun(out)
		if err != nil {
			t.Fatal(err)
		}
		m := map[int]string{}
		for _, l := range run.Launches(name) {
			m[l.Round] = l.Result.HostName
		}
		return m
	}
	checkDown := func(res result) {
		t.Helper()
		if want := down.Alias + ": not used: cannot be reached"; !strings.Contains(res.stdout, want) {
			t.Errorf("the end report lacks %q:\n%s", want, res.stdout)
		}
	}

	res := f.bakeoff("run", cfg, "--only", "a", "--out", out)
	if res.code != 0 {
		t.Fatalf("--only a: %s", res)
	}
	checkDown(res)
	homes := where("a")
	if len(homes) != 2 || homes[1] == homes[2] || homes[1] == down.Alias || homes[2] == down.Alias {
		t.Fatalf("rounds of a ran on %v, want one on each host that answers", homes)
	}
	for round, h := range homes {
		if want := fmt.Sprintf("%s: round %d", h, round); !strings.Contains(res.stdout, want) {
			t.Errorf("the end report lacks %q:\n%s", want, res.stdout)
		}
	}
	if got := where("b"); len(got) != 0 {
		t.Errorf("--only a ran b in rounds %v", got)
	}

	res = f.bakeoff("run", cfg, "--only", "b", "--into", out)
	if res.code != 0 {
		t.Fatalf("--only b --into: %s", res)
	}
	checkDown(res)
	if got := where("b"); !reflect.DeepEqual(got, homes) {
		t.Errorf("b ran on %v, want each round's host %v", got, homes)
	}

	res = f.bakeoff("run", cfg, "--only", "a", "--into", out)
	if res.code != 0 {
		t.Fatalf("rerun of a: %s", res)
	}
	run, err := results.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	f.logPhases(out)
	if got := f.checkCounted(run, s); !reflect.DeepEqual(got, homes) {
		t.Errorf("rounds counted on %v, want %v", got, homes)
	}
	for _, l := range run.Launches("a") {
		if l.Result.Attempt != 2 || len(l.Result.History) != 1 || l.Result.History[0].HostName != homes[l.Round] {
			t.Errorf("a round %d: attempt %d, history %+v; want attempt 2 after one on %s",
				l.Round, l.Result.Attempt, l.Result.History, homes[l.Round])
		}
	}
	if rep := f.bakeoff("report", out, "--format", "text", "--detail"); rep.code != 0 || !strings.Contains(rep.stdout, "2 rounds") {
		t.Errorf("bakeoff report: %s", rep)
	}

	// The host that was down: a host line each invocation, in the
	// manifest as left out, beside the others' facts.
	lines := 0
	for _, e := range journal(t, out) {
		if e.Phase == orchestrator.PhaseHost {
			lines++
			if e.Host != down.Alias || e.Round != 0 || !strings.Contains(e.Error, "cannot be reached") {
				t.Errorf("host line %+v, want %s not reached before any round", e, down.Alias)
			}
		}
	}
	if lines != 3 {
		t.Errorf("%d host lines, want one per invocation, 3", lines)
	}
	if len(run.Manifest.Fleet) != 3 {
		t.Fatalf("manifest fleet %+v, want the 3 hosts", run.Manifest.Fleet)
	}
	for _, fh := range run.Manifest.Fleet {
		if fh.Host == down.Alias {
			if !strings.Contains(fh.LeftOut, "cannot be reached") || fh.Facts != nil {
				t.Errorf("manifest fleet entry of %s %+v, want left out, no facts", fh.Host, fh)
			}
			continue
		}
		if fh.LeftOut != "" || fh.Facts == nil || fh.Facts.Driver == "" || len(fh.Facts.GPUs) == 0 ||
			!strings.Contains(fh.Facts.Name, fh.Host) {
			t.Errorf("manifest fleet entry of %s %+v, want its own facts (driver, GPUs)", fh.Host, fh)
		}
	}
	for _, h := range f.hosts[:2] {
		f.nothingLeftOn(h)
	}
}
