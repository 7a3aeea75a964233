package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/results"
)

// soakEnv switches the soak on (make soak); scaleEnv the scale measurement
// (make scale). Both take many minutes, so make test leaves them out.
const (
	soakEnv  = "BAKEOFF_SOAK"
	scaleEnv = "BAKEOFF_SCALE"
)

// The soak's campaign. Each launch loads for soakLoadTime and sweeps four
// levels of soakRequests requests of soakTokens tokens (a few simulated
// minutes), with the sims at soakSpeed. A launch takes 15–70 s of real time
// on a shared 2-core machine, most of it the orchestrator's round trips and
// polls, which count soakSpeed times over in simulated time too; soakRounds
// rounds of three scenarios over three hosts, one of them lost halfway,
// then span 16–60 simulated hours in 10–40 minutes. (Twelve rounds fell
// short of 12 hours once a stop took two commands on the host: 60 launches
// spanned 10.6 simulated hours in 6.6 minutes on the quiet machine.)
const (
	soakHosts     = 3
	soakSpeed     = 96
	soakRounds    = 30
	soakLoadTime  = 8 * time.Minute
	soakRequests  = 16
	soakTokens    = 256
	soakHours     = 12
	soakInterval  = 2 * time.Second
	soakCut       = 30 * time.Second
	soakCrashWait = 400 * time.Millisecond
)

// Flatness bounds over the second half of the run: the least-squares line
// through the heap left live after each garbage collection (the runtime's
// gctrace) may rise by what the campaign must keep plus at most
// heapLeakKiB, and the one through the orchestrator's open files by at most
// fdRise. What the campaign must keep is every launch's result (its level
// summaries, categories and notes): summary.json is rewritten from them
// after every launch and the verdict is built from them, so they grow with
// the launches by design; the test measures their size by holding the
// run's summary.json decoded. A leak of 25 KiB or one file per launch, over
// the second half's launches, exceeds the bounds. RSS is
// reported but not bounded by slope: bakeoff run collects at GOGC=800
// (cmd/bakeoff/gc.go), so its heap grows to about nine times the live heap
// between collections and the runtime returns the pages lazily; RSS then
// creeps towards that ceiling in steps without anything leaking. It must
// stay under rssCeilingKiB.
const (
	heapLeakKiB   = 1024
	fdRise        = 2.0
	rssCeilingKiB = 256 * 1024
)

// envInt reads a positive integer from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// outDir is where a campaign's files are kept: $BAKEOFF_SOAK_OUT, else a
// fresh folder under the temporary directory.
func outDir(t *testing.T, kind string) string {
	if d := os.Getenv("BAKEOFF_SOAK_OUT"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "bakeoff-"+kind+"-"+time.Now().UTC().Format("20060102T150405"))
}

// TestSoak runs a night of simulated time over a fleet of namespace hosts
// with faults injected on a schedule, samples the orchestrator throughout,
// and checks that the campaign finished, lost no measured request, left no
// server running, and kept its memory and open files flat.
func TestSoak(t *testing.T) {
	if os.Getenv(soakEnv) == "" {
		t.Skipf("the soak runs with %s=1 (make soak)", soakEnv)
	}
	nHosts := envInt(t, "BAKEOFF_SOAK_HOSTS", soakHosts)
	p := plan{
		name: "soak", scenarios: 3, rounds: envInt(t, "BAKEOFF_SOAK_ROUNDS", soakRounds),
		levels: []int{1, 2, 4, 8}, requests: soakRequests, maxTokens: soakTokens, warmup: 2,
		speed: envInt(t, "BAKEOFF_SOAK_SPEED", soakSpeed), loadTime: soakLoadTime,
	}
	hours := envInt(t, "BAKEOFF_SOAK_HOURS", soakHours)
	out := outDir(t, "soak")
	t.Logf("keeping the run, samples and output in %s", out)
	f := newFleet(t, nHosts, out)
	cfg := f.write(p)

	schedule := []fault{
		{name: "link cut during a sweep", at: 0.10, host: 0, inject: linkCut("sweep", soakCut)},
		{name: "server killed mid-sweep", at: 0.25, host: 1, inject: crashServer(soakCrashWait)},
		{name: "link cut while a server loads", at: 0.40, host: 2, inject: linkCut("ready", soakCut)},
		{name: "host lost for good", at: 0.55, host: 1, inject: powerOff},
		{name: "link cut as a server launches", at: 0.70, host: 0, inject: linkCut("launch", soakCut)},
	}
	if nHosts < 2 {
		// One host cannot be lost and leave the campaign a host to end on.
		schedule = append(schedule[:3], schedule[4:]...)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	r := f.start(ctx, cfg, soakInterval)
	in := &injector{t: t, f: f, r: r, total: p.launches(), lost: map[*testhost.Host]bool{}}
	injDone := make(chan struct{})
	go func() { defer close(injDone); in.run(ctx, schedule) }()
	res := f.wait(r)
	<-injDone

	var sum strings.Builder
	fmt.Fprintf(&sum, "soak: %d hosts, %d scenarios × %d rounds = %d launches, levels %v × %d requests of %d tokens, sim speed %d×, load %s simulated\n",
		nHosts, p.scenarios, p.rounds, p.launches(), p.levels, p.requests, p.maxTokens, p.speed, p.loadTime)
	simHours := res.wall.Hours() * float64(p.speed)
	fmt.Fprintf(&sum, "wall %s, simulated %.1f h, exit %d, orchestrator CPU %.1fs user + %.1fs system\n",
		res.wall.Round(time.Second), simHours, res.code, res.user.Seconds(), res.system.Seconds())

	// The faults: each must have landed.
	for _, fl := range in.log {
		status := "injected"
		if fl.err != nil {
			status = "NOT injected: " + fl.err.Error()
			t.Errorf("fault %q: %v", fl.name, fl.err)
		}
		fmt.Fprintf(&sum, "fault at %6s on %s: %s: %s %s\n", fl.at.Round(time.Second), fl.hostName, fl.name, status, fl.note)
	}

	// The campaign finished: every launch ended, only the crashed one
	// failed (at its sweep), none canceled.
	run, err := results.ReadRun(r.runDir)
	if err != nil {
		t.Fatalf("reading the run: %v\n%s", err, res.stderr)
	}
	ok, failed := 0, 0
	for _, sr := range run.Summary.Scenarios {
		switch sr.Status {
		case results.StatusOK:
			ok++
		case results.StatusFailed:
			failed++
			fmt.Fprintf(&sum, "failed launch: %s round %d at %s: %.200s\n", sr.Name, sr.RoundOf(), sr.FailedPhase, sr.Reason)
			if sr.FailedPhase != "sweep" {
				t.Errorf("%s round %d failed at %s (%s); only the server killed mid-sweep may fail, at sweep", sr.Name, sr.RoundOf(), sr.FailedPhase, sr.Reason)
			}
		default:
			t.Errorf("%s round %d ended %s", sr.Name, sr.RoundOf(), sr.Status)
		}
	}
	fmt.Fprintf(&sum, "launches: %d ok, %d failed, of %d\n", ok, failed, p.launches())
	if ok+failed != p.launches() {
		t.Errorf("%d launches ended, want %d", ok+failed, p.launches())
	}
	if failed > 1 {
		t.Errorf("%d launches failed, want at most the one whose server was killed", failed)
	}
	if res.code != 0 && !(res.code == 1 && failed == 1) {
		t.Errorf("bakeoff run exited %d\n%s", res.code, tail(res.stderr, 3000))
	}

	// No measured request lost.
	audits, err := Audit(r.runDir, p.requests)
	if err != nil {
		t.Fatal(err)
	}
	var served, recorded, lost, phantom, unaudited int
	for _, a := range audits {
		served += a.Served
		recorded += a.Recorded
		lost += a.Lost
		phantom += a.Phantom
		if !a.HaveLog {
			unaudited++
		}
		if a.Lost > 0 || a.Phantom > 0 || len(a.Short) > 0 {
			t.Errorf("%s (%s): served %d, smoke %d, recorded %d: lost %d, phantom %d, short %v",
				a.Dir, a.Status, a.Served, a.Smoke, a.Recorded, a.Lost, a.Phantom, a.Short)
		}
	}
	fmt.Fprintf(&sum, "requests: %d completions served by the sims, %d recorded (warm-up included, smoke requests aside), %d lost, %d phantom; %d attempts without a server log (their host lost)\n",
		served, recorded, lost, phantom, unaudited)

	// No server (or anything else) left on a host.
	for _, h := range f.hosts {
		if ps := settle(t, h); len(ps) > 0 {
			t.Errorf("left on %s: %+v", h.Alias, ps)
		}
	}

	// Memory and open files flat.
	rss := Summarize(res.samples, func(s Sample) float64 { return float64(s.RSSKiB) })
	fds := Summarize(res.samples, func(s Sample) float64 { return float64(s.FDs) })
	thr := Summarize(res.samples, func(s Sample) float64 { return float64(s.Threads) })
	fmt.Fprintf(&sum, "samples: %d, every %s\n", len(res.samples), soakInterval)
	fmt.Fprintf(&sum, "RSS MiB: start %.1f, end %.1f, min %.1f, max %.1f; second-half rise %.2f over %s; peak (ru_maxrss) %.1f (ceiling %.0f)\n",
		rss.Start/1024, rss.End/1024, rss.Min/1024, rss.Max/1024, rss.Rise/1024, rss.Span.Round(time.Second), float64(res.maxRSSKiB)/1024, float64(rssCeilingKiB)/1024)
	fmt.Fprintf(&sum, "open FDs: start %.0f, end %.0f, min %.0f, max %.0f; second-half rise %.2f (bound %.0f)\n",
		fds.Start, fds.End, fds.Min, fds.Max, fds.Rise, fdRise)
	fmt.Fprintf(&sum, "threads: start %.0f, end %.0f, max %.0f; second-half rise %.2f\n", thr.Start, thr.End, thr.Max, thr.Rise)
	// The collections during the campaign: the last one or two come once
	// every launch has ended, while bakeoff reads every record back for the
	// verdict and the report, which is work the campaign's length does not
	// grow per hour.
	var lastEnd time.Time
	for _, e := range readJournal(r.runDir) {
		if e.Phase == "scenario" && e.Event == "end" {
			lastEnd = e.Time
		}
	}
	var gcs []Sample
	for _, g := range LiveHeap(res.stderr) {
		if g.At <= lastEnd.Sub(r.started) {
			gcs = append(gcs, g)
		}
	}
	heap := Summarize(gcs, func(s Sample) float64 { return float64(s.RSSKiB) })
	kept := retainedKiB(t, filepath.Join(r.runDir, results.SummaryFile))
	ended, late := 0, 0
	if len(gcs) > 0 {
		mid := r.started.Add(gcs[0].At + (gcs[len(gcs)-1].At-gcs[0].At)/2)
		for _, e := range readJournal(r.runDir) {
			if e.Phase == "scenario" && e.Event == "end" {
				ended++
				if !e.Time.Before(mid) {
					late++
				}
			}
		}
	}
	allowance := 0.0
	if ended > 0 {
		allowance = kept / float64(ended) * float64(late)
	}
	fmt.Fprintf(&sum, "live heap after GC (gctrace) until the last launch ended, MiB: %d collections, first %.0f, last %.0f, max %.0f; second-half rise %.2f\n",
		len(gcs), heap.Start/1024, heap.End/1024, heap.Max/1024, heap.Rise/1024)
	fmt.Fprintf(&sum, "the launches' results held in memory: %.0f KiB for %d launches (%.1f KiB each); the %d that ended in the second half account for %.2f MiB of the rise, the other %.2f MiB is bounded by %.0f\n",
		kept, ended, kept/float64(max(ended, 1)), late, allowance/1024, (heap.Rise-allowance)/1024, float64(heapLeakKiB)/1024)
	if len(gcs) < 4 {
		t.Errorf("only %d garbage collections traced", len(gcs))
	}
	if heap.Rise > allowance+heapLeakKiB {
		t.Errorf("the live heap rose %.2f MiB over the second half: %.2f MiB more than the %d launches' results that ended in it (bound %d MiB)",
			heap.Rise/1024, (heap.Rise-allowance)/1024, late, heapLeakKiB/1024)
	}
	if len(res.samples) < 20 {
		t.Errorf("only %d samples", len(res.samples))
	}
	if rss.Max > rssCeilingKiB || float64(res.maxRSSKiB) > rssCeilingKiB {
		t.Errorf("RSS reached %.1f MiB (ru_maxrss %.1f), over the ceiling of %d MiB", rss.Max/1024, float64(res.maxRSSKiB)/1024, rssCeilingKiB/1024)
	}
	if fds.Rise > fdRise {
		t.Errorf("open files rose %.1f over the second half (bound %.0f)", fds.Rise, fdRise)
	}
	if simHours < float64(hours) {
		t.Errorf("the campaign spanned %.1f simulated hours, want at least %d", simHours, hours)
	}
	t.Log("\n" + sum.String())
	if err := os.WriteFile(filepath.Join(out, "summary.txt"), []byte(sum.String()), 0o600); err != nil {
		t.Error(err)
	}
}

// settle waits up to half a minute for h to hold nothing but sshd and
// returns what is still there.
func settle(t *testing.T, h *testhost.Host) []testhost.Process {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps := processes(t, h)
		if len(ps) == 0 || time.Now().After(deadline) {
			return ps
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// retainedKiB is how much live heap the run's summary.json takes once
// decoded into the results types the orchestrator holds: the campaign's own
// state, which grows by one result per launch.
func retainedKiB(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the run's summary: %v", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var sum results.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("reading the run's summary: %v", err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(&sum)
	runtime.KeepAlive(b)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1024
}
