package orchestrator_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// slotsAARounds is the A/A campaign's rounds: two for each slot, so that
// each slot is a block of more than one round and the pairs within it
// give the comparison its error.
const slotsAARounds = 4

// slotsAAWorld is a campaign of a TP 2 deployment, base, and its exact
// twin, two launches side by side on the sim's 8-GPU host. The server
// holds two GPUs; the router in front of it, which the load talks to,
// must say which GPUs it uses like every role of a shared host, and says
// it uses none (gpus: 0): it runs on the CPU, sees no GPU and takes none
// of its slot's, so a slot is the server's two. The router listens on
// {port:R} (its role's port written as R too, where bakeoff looks for it):
// a port the launch takes from a flag of its own, so that a slot whose
// {port:N} were not shifted would bind the other slot's router port, or
// answer its health check on a port bakeoff does not poll, and fail. It
// returns the router's port R.
func slotsAAWorld(t *testing.T, w *world, o campaignOpts) int {
	t.Helper()
	// A launch's ports lie within a slot's 100, and neither slot's copy of
	// the router's may be taken by a stranger.
	router := 0
	for off := 1; off < 100 && router == 0; off++ {
		if canListen(w.port+off) && canListen(w.port+off+100) {
			router = w.port + off
		}
	}
	if router == 0 {
		t.Skipf("no free port pair near %d for the routers", w.port)
	}
	for _, name := range []string{"base", "twin"} {
		text := fmt.Sprintf(`name: %s
engine: sglang
model: /models/test
args:
  tp: 2
  enable-metrics: true
  max-running-requests: 64
deployment:
  serve: router
  roles:
    server: {gpus: 2}
    router:
      gpus: 0
      port: %d
      launch: ["{bakeoff}", sim, router, --worker-urls, "http://{server.host}:{server.port}",
        --host, "{host}", --port, "{port:%d}"]
`, name, router, router)
		if err := os.WriteFile(filepath.Join(w.scenDir, name+".yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o.scenarios = []string{"base", "twin"}
	cfg := w.writeConfig(o)
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A short load: each slot launches its rounds one after another, and
	// the load is the same wait in every launch, measuring nothing.
	text := strings.Replace(string(body), `"--sim-load-time", "20s"]`, `"--sim-load-time", "2s"]`, 1)
	if err := os.WriteFile(cfg, []byte(text+"launches_per_host: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return router
}

// slotGPUs are the host's GPUs each slot's launch is given: the server's
// two, the router (gpus: 0) none, two a slot.
var slotGPUs = map[string][]int{"local/slot1": {0, 1}, "local/slot2": {2, 3}}

// TestSlotsAA runs an A/A pair of TP 2 deployments two at a time on one
// 8-GPU host: each round whole in one slot, on that slot's GPUs and ports,
// the slots' launches up at the same time, every port free at the end, and
// a verdict that compares the twin with the base at every level over every
// round, within each slot, and names no winner.
func TestSlotsAA(t *testing.T) {
	w := newWorld(t)
	router := slotsAAWorld(t, w, campaignOpts{rounds: slotsAARounds, speed: 10, requests: 8, concurrency: "[2, 4]"})
	start := time.Now()
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("campaign took %v", time.Since(start).Round(time.Millisecond))
	ports := []int{w.port, router, w.port + 100, router + 100}
	checkPortsFree(t, ports...)
	checkNoProcessOn(t, ports...)

	run := readSummary(t, out.RunDir)
	if n := len(run.Summary.Scenarios); n != 2*slotsAARounds {
		t.Errorf("%d launches, want %d", n, 2*slotsAARounds)
	}
	slotOf := map[int]string{}
	portsOf := map[string][]int{}
	for _, s := range run.Summary.Scenarios {
		if s.Status != results.StatusOK {
			t.Fatalf("%s round %d: %s at %s: %s\n%s", s.Name, s.Round, s.Status, s.FailedPhase, s.Reason, s.LogExcerpt)
		}
		if prev, ok := slotOf[s.Round]; ok && prev != s.HostName {
			t.Errorf("round %d ran in %s and %s: a round runs whole in one slot", s.Round, prev, s.HostName)
		}
		slotOf[s.Round] = s.HostName
		k := map[string]int{"local/slot1": 0, "local/slot2": 1}[s.HostName]
		gpus, ok := slotGPUs[s.HostName]
		if !ok {
			t.Fatalf("%s round %d ran on %q, not a slot of the host", s.Name, s.Round, s.HostName)
		}
		roles := launchLines(s.Launch)
		server, rtr := roles["server"], roles["router"]
		off := 100 * k
		for _, c := range []struct {
			role, line, want string
		}{
			{"server", server, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%d,%d ", gpus[0], gpus[1])},
			{"server", server, fmt.Sprintf(" --port %d ", w.port+off)},
			// Set empty, which CUDA reads as no GPU; unset would be all.
			{"router", rtr, "CUDA_VISIBLE_DEVICES='' "},
			{"router", rtr, fmt.Sprintf(" --worker-urls http://127.0.0.1:%d ", w.port+off)},
			{"router", rtr, fmt.Sprintf(" --port %d", router+off)},
		} {
			if !strings.Contains(c.line+" ", c.want) {
				t.Errorf("%s round %d in %s: the %s's launch lacks %q:\n%s", s.Name, s.Round, s.HostName, c.role, strings.TrimSpace(c.want), s.Launch)
			}
		}
		portsOf[s.HostName] = append(portsOf[s.HostName], launchPorts(s.Launch)...)
	}
	// Each slot's launches used its own ports, the other's are 100 apart,
	// and no port is in both.
	p1, p2 := compactSorted(portsOf["local/slot1"]), compactSorted(portsOf["local/slot2"])
	if !slices.Equal(p1, []int{min(w.port, router), max(w.port, router)}) {
		t.Errorf("slot 1's launches used ports %v, want %d and %d", p1, w.port, router)
	}
	for i := range p1 {
		if i >= len(p2) || p2[i] != p1[i]+100 {
			t.Errorf("slot 2's launches used ports %v, want slot 1's %v shifted by 100", p2, p1)
			break
		}
	}
	for _, p := range p1 {
		if slices.Contains(p2, p) {
			t.Errorf("port %d used by both slots (%v, %v)", p, p1, p2)
		}
	}
	if n1, n2 := countRounds(slotOf, "local/slot1"), countRounds(slotOf, "local/slot2"); n1 == 0 || n2 == 0 || n1+n2 != slotsAARounds {
		t.Errorf("rounds by slot %v: want every round run, some in each slot", slotOf)
	}
	checkServersOverlap(t, journal(t, out.RunDir))

	// A strict alpha: at the default 5% an A/A pair is called different
	// in about one campaign of twenty, and this test must fail far less
	// often. The price is power: with four rounds on a busy machine a twin
	// a quarter slower can go uncalled, so a setup that breaks the
	// placement or the pairing is caught by the checks above and by the
	// comparison's rounds, not by its outcome.
	v, err := judge.Run(run, verdict.Options{Alpha: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	checkAAVerdict(t, v, "twin", slotsAARounds)
}

// TestSlotsAAGPUWaits: each slot's GPU waits look at exactly the GPUs its
// launch is given, the server's (the router, of gpus: 0, adds none), and
// at no other GPU of the host. Every GPU of the host holds memory (a holder the sim's
// nvidia-smi reports, of no live process) through the campaign, so every
// wait times out, and its error names the GPUs it found busy: the GPUs it
// waited for, no more and no fewer.
func TestSlotsAAGPUWaits(t *testing.T) {
	w := newWorld(t)
	slotsAAWorld(t, w, campaignOpts{rounds: 2, speed: 10, requests: 8, concurrency: "[2, 4]", gpuWait: "300ms"})
	raw, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	pidMax, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(w.root, "sim-state")
	for g := range 8 {
		// A pid above pid_max is no process: nothing can kill it, and the
		// holder counts until HeldUntil, long after the test.
		h := fmt.Sprintf(`{"pid": %d, "gpu": %d, "mib": 4000, "name": "held-by-test", "hold_for": %d, "held_until": %d}`,
			pidMax+1+g, g, time.Hour, time.Now().Add(time.Hour).UnixNano())
		if err := os.WriteFile(filepath.Join(state, fmt.Sprintf("holder-%d.json", pidMax+1+g)), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{})
	if out == nil {
		t.Fatalf("no run: %v", err)
	}
	busyRe := regexp.MustCompile(`GPU ([0-9]+) uses [0-9]+ MiB`)
	seen := map[string]int{}
	for _, e := range journal(t, out.RunDir) {
		if e.Event != "end" || (e.Phase != string(orchestrator.StepGPUFree) && e.Phase != string(orchestrator.StepGPUFreeAfter)) {
			continue
		}
		want, ok := slotGPUs[e.Host]
		if !ok {
			t.Errorf("a GPU wait on %q, not a slot of the host: %s", e.Host, e.Error)
			continue
		}
		if e.Outcome != orchestrator.OutcomeFailed {
			t.Errorf("%s %s round %d: %s ended %s with every GPU held", e.Host, e.Scenario, e.Round, e.Phase, e.Outcome)
			continue
		}
		var got []int
		for _, m := range busyRe.FindAllStringSubmatch(e.Error, -1) {
			g, _ := strconv.Atoi(m[1])
			got = append(got, g)
		}
		if !slices.Equal(compactSorted(got), want) {
			t.Errorf("%s %s round %d: %s waited for GPUs %v, want %v: %s", e.Host, e.Scenario, e.Round, e.Phase, got, want, e.Error)
		}
		if seen[e.Host] == 0 {
			t.Logf("%s %s: %s", e.Host, e.Phase, e.Error)
		}
		seen[e.Host]++
	}
	for slot := range slotGPUs {
		if seen[slot] == 0 {
			t.Errorf("no GPU wait in %s", slot)
		}
	}
	ports := []int{w.port, w.port + 100}
	checkPortsFree(t, ports...)
	checkNoProcessOn(t, ports...)
}

// checkAAVerdict fails when the verdict calls twin, an exact copy of the
// baseline, faster or slower anywhere, or when it did not compare the two:
// every level measured for both, every comparison over all the rounds
// paired (a round split across two slots would leave its pair out), none
// left out for mixed hosts.
func checkAAVerdict(t *testing.T, v *verdict.Verdict, twin string, rounds int) {
	t.Helper()
	if v.Rounds != rounds || v.RoundsCompleted != rounds {
		t.Errorf("verdict rounds %d, completed %d; want %d", v.Rounds, v.RoundsCompleted, rounds)
	}
	if len(v.MixedHosts) > 0 {
		t.Errorf("rounds whose launches ran in two slots: %+v", v.MixedHosts)
	}
	// Each slot is a block of its own.
	var blocks []string
	for _, h := range v.Hosts {
		blocks = append(blocks, h.Host)
	}
	if slices.Sort(blocks); !slices.Equal(blocks, []string{"local/slot1", "local/slot2"}) {
		t.Errorf("the verdict's blocks are %v, want the two slots", blocks)
	}
	for _, sc := range v.Scenarios {
		for _, l := range sc.Levels {
			t.Logf("%s %s: client pace share %.2f%%", sc.Name, l.Level, 100*l.PaceShare)
		}
	}
	if len(v.Rows) != 2 {
		t.Fatalf("verdict has %d levels, want 2", len(v.Rows))
	}
	for _, row := range v.Rows {
		if row.Winner != "" || row.Outcome == verdict.RowWinner {
			t.Errorf("%s: winner %q in an A/A campaign", row.Level, row.Winner)
		}
		var cell *verdict.Cell
		for i := range row.Cells {
			if row.Cells[i].Scenario == twin {
				cell = &row.Cells[i]
			}
		}
		if cell == nil || !cell.Present || !cell.Compared {
			t.Errorf("%s: %s not compared with the baseline: %+v", row.Level, twin, cell)
			continue
		}
		t.Logf("%s: %s %s %+.2f%% [%.3f, %.3f] p=%.3g df=%.1f rounds %d %+v", row.Level, twin, cell.Outcome, cell.DeltaPct,
			cell.SpeedupLo, cell.SpeedupHi, cell.P, cell.DF, cell.Rounds, cell.Doubts)
		// A doubted level is measured and paired like any other; bakeoff
		// only declines to decide it (the machine's load can make the
		// client set its pace), which is no call either way.
		if cell.Rounds != rounds || cell.PairedOnly || cell.DF <= 0 || !(cell.SpeedupLo > 0 && cell.SpeedupLo <= cell.SpeedupHi) {
			t.Errorf("%s: %s compared over %d paired rounds (want %d), df %.1f, interval [%.3f, %.3f]",
				row.Level, twin, cell.Rounds, rounds, cell.DF, cell.SpeedupLo, cell.SpeedupHi)
		}
		switch cell.Outcome {
		case verdict.OutcomeTie, verdict.OutcomeInconclusive, verdict.OutcomeDoubted:
		default:
			t.Errorf("%s: the A/A twin is %s (%+.2f%%, p=%.3g adjusted %.3g)", row.Level, cell.Outcome, cell.DeltaPct, cell.P, cell.PAdjusted)
		}
	}
	for _, c := range v.Crossovers {
		if c.Scenario == twin && (c.StopsWinning != nil || c.StartsLosing != nil) {
			t.Errorf("the crossover names a win or a loss for %s: %s", twin, c.Sentence)
		}
	}
}

// launchLines are a deployment's launch lines by role ("server on local:
// env -- …").
func launchLines(launch string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(launch, "\n") {
		if role, rest, ok := strings.Cut(l, " on "); ok {
			out[role] = rest
		}
	}
	return out
}

// portWordRe is a port a launch line listens on or points at: --port N,
// or HOST:N in a URL.
var portWordRe = regexp.MustCompile(`(?:--port '?|127\.0\.0\.1:)([0-9]+)`)

func launchPorts(launch string) []int {
	var out []int
	for _, m := range portWordRe.FindAllStringSubmatch(launch, -1) {
		p, _ := strconv.Atoi(m[1])
		out = append(out, p)
	}
	return out
}

// canListen reports whether port is free on the loopback now.
func canListen(port int) bool {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func compactSorted(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func countRounds(slotOf map[int]string, slot string) int {
	n := 0
	for _, s := range slotOf {
		if s == slot {
			n++
		}
	}
	return n
}

// checkServersOverlap fails unless some launch of slot 1 and some launch
// of slot 2 had their servers up at the same time: from the launch step's
// start to the stop step's end.
func checkServersOverlap(t *testing.T, entries []orchestrator.JournalEntry) {
	t.Helper()
	type span struct{ from, to time.Time }
	type key struct {
		host, scenario string
		round          int
	}
	spans := map[key]*span{}
	for _, e := range entries {
		k := key{e.Host, e.Scenario, e.Round}
		switch {
		case e.Phase == string(orchestrator.StepLaunch) && e.Event == "start":
			spans[k] = &span{from: e.Time}
		case e.Phase == string(orchestrator.StepStop) && e.Event == "end" && spans[k] != nil:
			spans[k].to = e.Time
		}
	}
	for a, sa := range spans {
		for b, sb := range spans {
			if a.host == "local/slot1" && b.host == "local/slot2" && sa.from.Before(sb.to) && sb.from.Before(sa.to) {
				return
			}
		}
	}
	t.Errorf("no launch of slot 1 was up while one of slot 2 was: the slots did not run side by side")
}

// checkNoProcessOn fails when a process of this binary still names one of
// the ports on its command line: the world's own check knows only its
// first port, and slot 2's processes are on others.
func checkNoProcessOn(t *testing.T, ports ...int) {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(raw), bakeoffBin) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		for i, a := range args {
			for _, p := range ports {
				if strings.Contains(a, fmt.Sprintf("127.0.0.1:%d", p)) || (a == "--port" && i+1 < len(args) && args[i+1] == strconv.Itoa(p)) {
					t.Errorf("process %s still runs on port %d: %q", filepath.Base(d), p, strings.Join(args, " "))
				}
			}
		}
	}
}
