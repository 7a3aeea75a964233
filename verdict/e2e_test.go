package verdict

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/measure"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/sim"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// End-to-end honesty: real `bakeoff sim` processes on 127.0.0.1, swept one
// after the other by the real load generator, written as a run directory
// and read back by Compute. The default test is one A/A and one power
// campaign on a short sweep; BAKEOFF_HONESTY_SEEDS=N runs N campaigns of
// each on the seeds' full sweep and prints the rates docs/METHOD.md quotes.

// e2eBaselineArgs are the seeds' baseline server flags, as
// scenarios/baseline.yaml renders them.
const e2eBaselineArgs = "--model-path /data/models/Kimi-K2.5-INT4 --tp 8 --cuda-graph-max-bs 128 --attention-backend flashinfer --enable-flashinfer-allreduce-fusion --disable-custom-all-reduce --max-running-requests 256"

// e2eSpeed keeps the streamed chunk rate within what two cores serve and
// read while the server's own timing stays far above the OS's jitter.
const e2eSpeed = 20

var (
	buildOnce    sync.Once
	binary       string
	buildCleanup func()
	buildErr     error
)

// bakeoffBinary builds cmd/bakeoff once per test binary.
func bakeoffBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { binary, buildCleanup, buildErr = testbin.Build() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildCleanup != nil {
		buildCleanup()
	}
	os.Exit(code)
}

func freePort(t *testing.T) int { return testbin.FreePort(t) }

// simServer is one running `bakeoff sim`.
type simServer struct {
	url  string
	stop func()
}

// startSim starts one sim with the baseline's flags plus extra, waits until
// it is healthy, and stops it (its process group, which this test started,
// and any scheduler child it registered) at cleanup.
func startSim(t *testing.T, extra ...string) *simServer {
	t.Helper()
	state := t.TempDir()
	port := freePort(t)
	args := append([]string{"sim", "--port", strconv.Itoa(port), "--sim-speed", strconv.Itoa(e2eSpeed),
		"--sim-load-time", "1s"}, strings.Fields(e2eBaselineArgs)...)
	cmd := exec.Command(bakeoffBinary(t), append(args, extra...)...)
	cmd.Env = append(os.Environ(), sim.SimStateEnv+"="+state)
	var log strings.Builder
	var logMu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(p) })
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		for range 100 {
			hs, _ := sim.LiveHolders(state, time.Now())
			alive := 0
			for _, h := range hs {
				if syscall.Kill(h.PID, 0) == nil {
					syscall.Kill(h.PID, syscall.SIGKILL)
					alive++
				}
			}
			if alive == 0 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Cleanup(stop)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 1000 {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return &simServer{url: url, stop: stop}
			}
		}
		select {
		case <-done:
			logMu.Lock()
			t.Fatalf("sim exited before it was healthy:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("sim never turned healthy")
	return nil
}

// sweepLevel runs one level against srv and returns its records; warmup
// requests go first when asked.
func sweepLevel(t *testing.T, srv *simServer, c, warmup int) []measure.Record {
	t.Helper()
	set, err := prompts.Load(prompts.Builtin, "")
	if err != nil {
		t.Fatal(err)
	}
	var recs []measure.Record
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = loadgen.Run(ctx, loadgen.Options{URL: srv.url, Concurrency: []int{c}, MaxTokens: 200, Warmup: warmup,
		IgnoreEOS: true, Temperature: 0, Prompts: set,
		Records: func(r measure.Record) error { recs = append(recs, r); return nil }})
	if err != nil {
		t.Fatalf("sweep at C=%d: %v", c, err)
	}
	return recs
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// e2eCampaign sweeps the baseline and a variant (the baseline's flags plus
// variantFlags) and computes the verdict from the run directory. Both sims
// are up at once and the levels alternate between them, so that load from
// other processes on a shared test machine falls on both alike; on a GPU
// host the orchestrator runs one server after the other, with no such load.
func e2eCampaign(t *testing.T, levels []int, seed int, variantFlags ...string) *Verdict {
	t.Helper()
	bs := startSim(t, "--sim-seed", strconv.Itoa(2*seed+1))
	vs := startSim(t, append([]string{"--sim-seed", strconv.Itoa(2*seed + 2)}, variantFlags...)...)
	defer bs.stop()
	defer vs.stop()
	var base, variant []measure.Record
	for i, c := range levels {
		warmup := 0
		if i == 0 {
			warmup = 5
		}
		base = append(base, sweepLevel(t, bs, c, warmup)...)
		variant = append(variant, sweepLevel(t, vs, c, warmup)...)
	}
	s := verdicttest.DefaultSweep()
	s.Concurrency = levels
	if len(base) > 0 {
		s.PromptSet = base[0].PromptSet
	}
	m := verdicttest.Manifest("e2e", fmt.Sprintf("seed%d", seed), "sha256:e2e", "baseline", s, "baseline", "variant")
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Records: base}, {Name: "variant", Records: variant}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Compute(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range v.Notes {
		if n.Severity == SeverityRed {
			t.Errorf("red fairness note: %s", n.Text)
		}
	}
	return v
}

// e2eShortSweep is a sweep that fits the test budget: levels where auto
// requests (30) give four or more turnovers, hence samples.
var e2eShortSweep = []int{1, 3, 6}

func honestySeeds() int {
	n, _ := strconv.Atoi(os.Getenv("BAKEOFF_HONESTY_SEEDS"))
	return n
}

// withRerun runs attempt; when it reports a failure in the short default
// mode, it runs once more with another seed offset and fails only if that
// fails too. These tests measure time on a machine other test suites share
// (load averages of ten on two cores are seen), and a burst of that load
// during one server's level is a real slowdown the verdict rightly reports.
// The long mode (BAKEOFF_HONESTY_SEEDS) measures rates and never reruns.
func withRerun(t *testing.T, attempt func(seedOffset int) string) {
	t.Helper()
	msg := attempt(0)
	if msg == "" {
		return
	}
	if honestySeeds() > 0 {
		t.Error(msg)
		return
	}
	t.Logf("first campaign: %s; rerunning once", msg)
	if msg := attempt(1000); msg != "" {
		t.Errorf("rerun: %s", msg)
	}
}

// e2eSize is one short campaign, or with BAKEOFF_HONESTY_SEEDS=N, N
// campaigns over the full sweep.
func e2eSize() (levels []int, seeds int) {
	if n := honestySeeds(); n > 0 {
		return verdicttest.DefaultSweep().Concurrency, n
	}
	return e2eShortSweep, 1
}

func TestEndToEndAA(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps real sim processes")
	}
	levels, seeds := e2eSize()
	withRerun(t, func(offset int) string {
		total, winners := 0, 0
		for seed := range seeds {
			v := e2eCampaign(t, levels, seed+offset)
			for _, row := range v.Rows {
				total++
				c := v.Cell(row.Level, "variant")
				if row.Winner != "" {
					winners++
				}
				t.Logf("seed %d C=%d: winner %q (%+.2f%%, p=%.4f)", seed+offset, row.Level, row.Winner, c.DeltaPct, c.P)
			}
		}
		t.Logf("end-to-end A/A: a winner at %d of %d levels (%.1f%%)", winners, total, 100*float64(winners)/float64(total))
		// One short campaign cannot measure a 5% rate; it can catch a
		// pipeline that makes noise look significant, which shows at most
		// levels.
		if limit := max(1, total/20); winners > limit {
			return fmt.Sprintf("A/A: a winner at %d of %d levels, want at most %d", winners, total, limit)
		}
		return ""
	})
}

func TestEndToEndPower(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps real sim processes")
	}
	levels, seeds := e2eSize()
	withRerun(t, func(offset int) string {
		total, detected := 0, 0
		for seed := range seeds {
			v := e2eCampaign(t, levels, seed+100+offset, "--sim-slowdown", "1.05")
			for _, row := range v.Rows {
				total++
				c := v.Cell(row.Level, "variant")
				if row.Winner == "baseline" {
					detected++
				}
				t.Logf("seed %d C=%d: winner %q (%+.2f%%, p=%.4f)", seed+offset, row.Level, row.Winner, c.DeltaPct, c.P)
			}
		}
		rate := float64(detected) / float64(total)
		t.Logf("end-to-end power: the 5%% slower variant lost at %d of %d levels (%.1f%%)", detected, total, 100*rate)
		if rate < 0.6 {
			return fmt.Sprintf("power %.1f%% at %d levels", 100*rate, total)
		}
		return ""
	})
}

// e2eTopK4Flags turn the baseline into the seeds' EAGLE-3 topk=4 scenario.
const e2eTopK4Flags = "--speculative-algorithm EAGLE3 --speculative-draft-model-path /data/eagle3/drafter --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"

// modelCrossover is where the sim's own model (run in virtual time, no
// noise from a machine) says topk=4 stops beating the baseline among levels.
func modelCrossover(t *testing.T, levels []int) Bracket {
	t.Helper()
	cfg := func(extra string) *sim.Config {
		c, err := sim.ParseArgs(strings.Fields(e2eBaselineArgs+" "+extra), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base, topk4 := cfg(""), cfg(e2eTopK4Flags)
	ahead := func(c int) bool {
		load := sim.ClosedLoop{Concurrency: c, Requests: measure.RequestsFor(0, c), MaxTokens: 200, PromptTokens: 100}
		return sim.RunVirtual(topk4, load, 1).Throughput > sim.RunVirtual(base, load, 1).Throughput
	}
	for i := 1; i < len(levels); i++ {
		if ahead(levels[i-1]) && !ahead(levels[i]) {
			return Bracket{From: levels[i-1], To: levels[i]}
		}
	}
	t.Fatalf("the sim's model implies no crossover among %v", levels)
	return Bracket{}
}

func TestEndToEndCrossover(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps real sim processes")
	}
	levels := []int{1, 2} // the seeds' crossover: ahead single-stream, behind from two on
	want := modelCrossover(t, levels)
	withRerun(t, func(offset int) string {
		v := e2eCampaign(t, levels, 300+offset, strings.Fields(e2eTopK4Flags)...)
		x := v.Crossovers[0]
		t.Logf("model: stops winning between C=%d and C=%d; verdict: %s", want.From, want.To, x.Sentence)
		switch {
		case x.StopsWinning == nil:
			c := v.Cell(levels[0], "variant")
			return fmt.Sprintf("no crossover reported: %s (C=%d: %+.2f%% p=%.3f)", x.Sentence, levels[0], c.DeltaPct, c.P)
		case x.StopsWinning.From > want.From || x.StopsWinning.To < want.To:
			return fmt.Sprintf("reported crossover C=%d..%d does not bracket the model's C=%d..%d",
				x.StopsWinning.From, x.StopsWinning.To, want.From, want.To)
		}
		return ""
	})
}
