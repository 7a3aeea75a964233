package verdict

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/verdict/rule"
	"github.com/bakeoff-dev/bakeoff/verdict/verdicttest"
)

// End-to-end honesty: real `bakeoff sim` processes on 127.0.0.1, swept one
// after the other by the real load generator, written as a run directory
// and read back by records.Read. The default test is twenty A/A campaigns and
// one power campaign on a short sweep; BAKEOFF_HONESTY_SEEDS=N runs N
// campaigns of each on the seeds' full sweep and prints the rates
// docs/METHOD.md quotes.

// e2eBaselineArgs are the seeds' baseline server flags, as
// scenarios/baseline.yaml renders them in today's SGLang spellings (the sim
// refuses the old fusion flag on its SM120 GPUs, as SGLang does).
const e2eBaselineArgs = "--model-path /data/models/Kimi-K2.5-INT4 --tp-size 8 --cuda-graph-max-bs-decode 128 --attention-backend flashinfer --disable-custom-all-reduce --max-running-requests 256"

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

// testGCPercent is the collector's setting for this package's tests unless
// GOGC says otherwise: the synthetic campaigns allocate records by the
// million and keep few, so at the default of 100 a third of their CPU went
// to the collector; at 400 a campaign takes about 40% less CPU
// (docs/PERFORMANCE.md, "The test suite's time"), and the package's peak
// heap stays in the hundreds of MiB.
const testGCPercent = 400

func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(testGCPercent)
	}
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
		"--sim-load-time", "200ms"}, strings.Fields(e2eBaselineArgs)...)
	cmd := exec.Command(bakeoffBinary(t), append(args, extra...)...)
	cmd.Env = append(os.Environ(), gpu.SimStateEnv+"="+state)
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
			hs, _ := gpu.LiveHolders(state, time.Now())
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

// e2eMaxTokens keeps each level short: the honesty of the verdict does not
// depend on the output length, and the test's wall time does.
const e2eMaxTokens = 64

// e2eNoise is the sim's launch noise and drift for every launch: what the
// synthetic honesty tests assume of a real host.
var e2eNoise = []string{"--sim-launch-sigma", "0.01", "--sim-drift", "0.01"}

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
	_, err = loadgen.Run(ctx, loadgen.Options{URL: srv.url, Concurrency: []int{c}, MaxTokens: e2eMaxTokens, Warmup: warmup,
		IgnoreEOS: true, Temperature: 0, Prompts: set,
		Records: func(r measure.Record) error { recs = append(recs, r); return nil }})
	if err != nil {
		t.Fatalf("sweep at C=%d: %v", c, err)
	}
	return recs
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// e2eCampaign runs rounds of launches of the baseline and a variant (the
// baseline's flags plus variantFlags) as the orchestrator does on one host:
// one server at a time, each launch a fresh `bakeoff sim` process with its
// own seed (so its own launch factor and drift path) that sweeps every level
// and is stopped before the next starts, in the counterbalanced order of
// verdicttest.RoundOrder (baseline first in odd rounds, variant first in
// even ones). Load from other processes on a shared test machine then falls
// on one launch's consecutive levels, as a disturbance of the host does. It
// writes the launches as a run directory with rounds and computes the
// verdict from it.
// e2eCampaignsAtOnce is how many end-to-end campaigns run at the same time.
// Each campaign launches its servers one at a time, as a host does, and
// mostly waits on them: one at a time, the A/A test took three minutes
// with the machine two-thirds idle. Two at a time, each campaign's sims
// share the cores with another campaign's, a neighbour of the kind a GPU
// host's CPU has (the server's own scheduler and tokenizer processes, the
// load generator), which the A/A bound must survive too.
const e2eCampaignsAtOnce = 2

// runE2ECampaigns runs n campaigns, e2eCampaignsAtOnce at a time, each as its
// own subtest (seed 0 to n-1), and returns their verdicts by seed.
func runE2ECampaigns(t *testing.T, n int, campaign func(t *testing.T, seed int) *Verdict) []*Verdict {
	t.Helper()
	out := make([]*Verdict, n)
	slots := make(chan struct{}, e2eCampaignsAtOnce)
	t.Run("campaigns", func(t *testing.T) {
		for seed := range n {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				t.Parallel()
				slots <- struct{}{}
				defer func() { <-slots }()
				out[seed] = campaign(t, seed)
			})
		}
	})
	for seed, v := range out {
		if v == nil {
			t.Fatalf("campaign %d gave no verdict", seed)
		}
	}
	return out
}

func e2eCampaign(t *testing.T, levels []int, rounds, seed int, variantFlags ...string) *Verdict {
	t.Helper()
	recs := [2][][]measure.Record{make([][]measure.Record, rounds), make([][]measure.Record, rounds)}
	for r := range rounds {
		k := 2 * (seed*rounds + r)
		for _, i := range verdicttest.RoundOrder(2, r+1) {
			args := append([]string{"--sim-seed", strconv.Itoa(k + 1 + i)}, e2eNoise...)
			if i == 1 {
				args = append(args, variantFlags...)
			}
			srv := startSim(t, args...)
			for j, c := range levels {
				warmup := 0
				if j == 0 {
					warmup = 5
				}
				recs[i][r] = append(recs[i][r], sweepLevel(t, srv, c, warmup)...)
			}
			srv.stop()
		}
	}
	base, variant := recs[0], recs[1]
	s := verdicttest.DefaultSweep()
	s.Concurrency = levels
	s.MaxTokens = e2eMaxTokens
	if len(base[0]) > 0 {
		s.PromptSet = base[0][0].PromptSet
	}
	m := verdicttest.Manifest("e2e", fmt.Sprintf("seed%d", seed), "sha256:e2e", "baseline", s, "baseline", "variant")
	m.Rounds = rounds
	run, err := verdicttest.WriteRun(t.TempDir(), m, []verdicttest.Scenario{
		{Name: "baseline", Rounds: base}, {Name: "variant", Rounds: variant}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := judgedDir(run, Options{})
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

// The default end-to-end campaigns fit the test budget: three levels where
// auto requests (30) give several turnovers (C=1 is left out: at one
// stream a level takes as long as the other three together, and the
// campaign, not the level, is what the A/A test counts), three rounds (the
// fewest that give the launch-to-launch variance two df of its own), and
// twenty A/A campaigns: enough that a method naming a false winner in 30%
// of campaigns fails the bound nine runs in ten (TestAACampaignLimit).
var (
	e2eShortSweep = []int{2, 4, 8}
	e2eRounds     = 3
	e2eCampaigns  = 20
)

// e2eSize is the default campaigns; with BAKEOFF_HONESTY_SEEDS=N, N
// campaigns of DefaultRounds over the seeds' full sweep; with
// BAKEOFF_E2E_CAMPAIGNS=N, N campaigns of the default shape (the first ones
// are the default ones).
func e2eSize() (levels []int, rounds, campaigns int) {
	if n := honestySeeds(); n > 0 {
		return verdicttest.DefaultSweep().Concurrency, DefaultRounds, n
	}
	if n, _ := strconv.Atoi(os.Getenv("BAKEOFF_E2E_CAMPAIGNS")); n > 0 {
		return e2eShortSweep, e2eRounds, n
	}
	return e2eShortSweep, e2eRounds, e2eCampaigns
}

// logRounds logs each round's log ratio of the variant's throughput to the
// baseline's at every level, and which of the two launched first: the raw
// material of the verdict, to tell a launch effect (one sign across a
// round's levels), a drift (a trend across them) and an order effect (one
// sign by launch position) apart.
func logRounds(t *testing.T, v *Verdict, seed int) {
	t.Helper()
	b, vr := v.Scenario("baseline"), v.Scenario("variant")
	byRound := map[int]string{}
	first := map[int]string{}
	var rounds []int
	for _, c := range v.Levels {
		lb, lv := b.Level(c), vr.Level(c)
		for _, x := range lb.Launches {
			for _, y := range lv.Launches {
				if x.Round != y.Round {
					continue
				}
				if _, ok := byRound[x.Round]; !ok {
					rounds = append(rounds, x.Round)
				}
				byRound[x.Round] += fmt.Sprintf(" %+.2f%%", 100*math.Log(y.Throughput/x.Throughput))
				first[x.Round] = [2]string{"baseline", "variant"}[verdicttest.RoundOrder(2, x.Round)[0]]
			}
		}
	}
	for _, r := range rounds {
		t.Logf("seed %d round %d (%s first): log ratio by level%s", seed, r, first[r], byRound[r])
	}
}

func honestySeeds() int {
	n, _ := strconv.Atoi(os.Getenv("BAKEOFF_HONESTY_SEEDS"))
	return n
}

// TestEndToEndAA: two identical configurations, each launched afresh every
// round with the sim's launch noise and drift, one server at a time. The
// unit counted is the campaign, not the level: a launch's offset is shared
// by all its levels, so one unlucky draw moves a campaign's levels
// together, and a correct method names a winner at several levels of the
// same campaign as often as at one. Holm's correction keeps a campaign's
// chance of naming any winner at most DefaultAlpha, so more campaigns with
// a winner than aaCampaignLimit allows happens to a correct method at most
// 2% of the time, and to one that names a winner in 30% of campaigns nine
// times in ten. No rerun on failure. The log gives each round's log ratios
// by level and launch order, and how many levels and campaigns the method
// this package used before rounds (every within-launch sample of every
// launch pooled as if independent, no correction) would have called.
func TestEndToEndAA(t *testing.T) {
	levels, rounds, campaigns := e2eSize()
	total, winners, sentences, named, broken, brokenNamed := 0, 0, 0, 0, 0, 0
	verdicts := runE2ECampaigns(t, campaigns, func(t *testing.T, seed int) *Verdict { return e2eCampaign(t, levels, rounds, seed) })
	for seed, v := range verdicts {
		logRounds(t, v, seed)
		any, anyBroken := false, false
		b, vr := v.Scenario("baseline"), v.Scenario("variant")
		for _, row := range v.Rows {
			total++
			c := v.Cell(row.Level, "variant")
			if row.Winner != "" {
				winners++
				any = true
			}
			if rule.Welch(b.Level(row.Level).Samples, vr.Level(row.Level).Samples).P() < DefaultAlpha {
				broken++
				anyBroken = true
			}
			t.Logf("seed %d %s: %s %s [%.4f, %.4f] p_adj=%.4f, round sd %.2f%%, df %.1f",
				seed, row.Level, c.Outcome, Pct(c.DeltaPct), c.SpeedupLo, c.SpeedupHi, c.PAdjusted, c.RoundSDPct, c.DF)
		}
		if any {
			named++
		}
		if anyBroken {
			brokenNamed++
		}
		x := v.Crossovers[0]
		for _, seg := range x.Segments {
			if seg.Sign != 0 {
				sentences++
				break
			}
		}
		t.Log(x.Sentence)
	}
	limit := aaCampaignLimit(campaigns)
	t.Logf("end-to-end A/A, %d rounds: a winner at %d of %d levels (%.1f%%), in %d of %d campaigns (at most %d allowed); a win or loss in %d of %d crossover sentences; the pooled within-launch samples, uncorrected, name one at %d levels, in %d campaigns",
		rounds, winners, total, 100*float64(winners)/float64(total), named, campaigns, limit, sentences, campaigns, broken, brokenNamed)
	if named > limit {
		t.Errorf("A/A: a winner in %d of %d campaigns, want at most %d", named, campaigns, limit)
	}
}

// TestAACampaignLimit: the bound on A/A campaigns with a winner, against
// the binomial tail worked by hand (P(X>1) for 4 campaigns at 5% is 1.4%,
// P(X>0) 18.5%; for 20, P(X>3) is 1.6%, P(X>2) 7.5%), and what it catches
// at the end-to-end test's size: a method that names a false winner in 30%
// of campaigns (as the method before rounds did in far more than that)
// exceeds it nine runs in ten, one at 20% about half the time.
func TestAACampaignLimit(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{1, 1}, {4, 1}, {20, 3}, {40, 5}} {
		if got := aaCampaignLimit(tt.n); got != tt.want {
			t.Errorf("aaCampaignLimit(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct{ rate, atLeast float64 }{{0.30, 0.88}, {0.20, 0.55}, {DefaultAlpha, 0}} {
		limit := aaCampaignLimit(e2eCampaigns)
		caught := 1 - distuv.Binomial{N: float64(e2eCampaigns), P: tt.rate}.CDF(float64(limit))
		t.Logf("a method naming a false winner in %.0f%% of campaigns fails %d campaigns' bound (%d) with probability %.3f", 100*tt.rate, e2eCampaigns, limit, caught)
		if caught < tt.atLeast {
			t.Errorf("at a %.0f%% false-campaign rate the end-to-end A/A bound catches it with probability %.3f, want ≥ %.2f", 100*tt.rate, caught, tt.atLeast)
		}
		if tt.rate == DefaultAlpha && caught > 0.02 {
			t.Errorf("a correct method fails the bound with probability %.3f, want ≤ 0.02", caught)
		}
	}
}

// aaCampaignLimit is the most A/A campaigns of n that may name a winner: the
// smallest k that a correct method, each campaign naming one with
// probability DefaultAlpha, exceeds with probability at most 2%.
func aaCampaignLimit(n int) int {
	b := distuv.Binomial{N: float64(n), P: DefaultAlpha}
	for k := 0; k < n; k++ {
		if 1-b.CDF(float64(k)) <= 0.02 {
			return k
		}
	}
	return n
}

// TestEndToEndPower: a variant 5% slower, launched as above, is never
// called faster; with BAKEOFF_HONESTY_SEEDS it must be found slower at 80%
// of levels. The short default campaign (three rounds of 64-token levels on
// a shared test machine, where other suites' load adds several percent of
// noise per level) often cannot tell, and says so.
func TestEndToEndPower(t *testing.T) {
	levels, rounds, campaigns := e2eSize()
	if honestySeeds() == 0 {
		campaigns = 1
	}
	total, detected, wrong := 0, 0, 0
	for seed := range campaigns {
		v := e2eCampaign(t, levels, rounds, seed+100, "--sim-slowdown", "1.05")
		for _, row := range v.Rows {
			total++
			c := v.Cell(row.Level, "variant")
			switch c.Outcome {
			case OutcomeSlower:
				detected++
			case OutcomeFaster:
				wrong++
			}
			t.Logf("seed %d %s: %s %s [%.4f, %.4f] p_adj=%.4f", seed, row.Level, c.Outcome, Pct(c.DeltaPct), c.SpeedupLo, c.SpeedupHi, c.PAdjusted)
		}
	}
	rate := float64(detected) / float64(total)
	t.Logf("end-to-end power: the 5%% slower variant found slower at %d of %d levels (%.1f%%)", detected, total, 100*rate)
	if wrong > 0 {
		t.Errorf("the 5%% slower variant was called faster at %d levels", wrong)
	}
	if honestySeeds() > 0 && rate < 0.8 {
		t.Errorf("power %.1f%% at %d levels, want ≥ 80%%", 100*rate, total)
	}
}
