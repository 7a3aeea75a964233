package sim

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// TestLaunchNoiseDistribution: the launch factor's log has σ Sigma and
// median 0 over many launches, the drift is stationary with σ Drift and
// correlation exp(−Δt/τ), and each is a pure function of the seed and t.
func TestLaunchNoiseDistribution(t *testing.T) {
	const n = 4000
	noise := model.LaunchNoise{Sigma: 0.02, Drift: 0.01, Tau: time.Minute}
	var sumF, sumF2, sumX, sumX2, sumXY float64
	for s := range uint64(n) {
		l := noise.Draw(s)
		lf := math.Log(l.Factor())
		sumF += lf
		sumF2 += lf * lf
		x, y := l.DriftAt(10*time.Minute), l.DriftAt(11*time.Minute)
		sumX += x
		sumX2 += x * x
		sumXY += x * y
	}
	mean := func(s float64) float64 { return s / n }
	sdF := math.Sqrt(mean(sumF2) - mean(sumF)*mean(sumF))
	sdX := math.Sqrt(mean(sumX2) - mean(sumX)*mean(sumX))
	corr := (mean(sumXY) - mean(sumX)*mean(sumX)) / (sdX * sdX)
	// Standard errors at n = 4000: the mean of log F ±0.0003, the σs ±1.1%,
	// the correlation ±0.013; the bounds are four of them or more.
	if math.Abs(mean(sumF)) > 0.0013 || math.Abs(sdF/0.02-1) > 0.05 {
		t.Errorf("log launch factor: mean %.5f, σ %.5f; want 0, 0.02", mean(sumF), sdF)
	}
	if math.Abs(mean(sumX)) > 0.0007 || math.Abs(sdX/0.01-1) > 0.06 {
		t.Errorf("drift at 10 min: mean %.5f, σ %.5f; want 0, 0.01", mean(sumX), sdX)
	}
	if want := math.Exp(-1); math.Abs(corr-want) > 0.06 {
		t.Errorf("drift correlation one τ apart %.3f, want %.3f", corr, want)
	}
}

func TestLaunchNoiseReproducible(t *testing.T) {
	noise := model.LaunchNoise{Sigma: 0.01, Drift: 0.01, Tau: 30 * time.Second}
	a, b, c := noise.Draw(7), noise.Draw(7), noise.Draw(8)
	if a.Factor() != b.Factor() || a.Factor() == c.Factor() {
		t.Errorf("factors: seed 7 %v and %v, seed 8 %v", a.Factor(), b.Factor(), c.Factor())
	}
	// The path does not depend on when, or how often, it is read: a server
	// on a busy machine reads it at other times than a quiet one.
	late := b.DriftAt(20 * time.Minute)
	for ts := time.Duration(0); ts <= 20*time.Minute; ts += 333 * time.Millisecond {
		a.DriftAt(ts)
	}
	if got := a.DriftAt(20 * time.Minute); got != late {
		t.Errorf("drift at 20 min: %v read in order, %v read at once", got, late)
	}
	// The drift's path does not depend on Sigma, so turning the launch
	// factor on or off leaves it alone.
	if x, y := (model.LaunchNoise{Drift: 0.01, Tau: 30 * time.Second}).Draw(7).DriftAt(time.Minute), noise.Draw(7).DriftAt(time.Minute); x != y {
		t.Errorf("drift depends on sigma: %v vs %v", x, y)
	}
	var none *model.Launch
	if none.At(time.Hour) != 1 || none.Scale(time.Second, 0) != time.Second || (model.LaunchNoise{}).Draw(3).At(time.Hour) != 1 {
		t.Error("no launch noise must scale nothing")
	}
}

// TestLaunchNoiseVirtual: in the virtual harness a launch factor scales the
// throughput by exactly its inverse; the step noise drawn with the same seed
// is unchanged by it.
func TestLaunchNoiseVirtual(t *testing.T) {
	load := model.ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}
	for _, noise := range []string{"0", "0.02"} {
		plain := model.RunVirtual(simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", noise), load, 5).Throughput
		cfg := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", noise, "--sim-launch-sigma", "0.05")
		got := model.RunVirtual(cfg, load, 5).Throughput
		f := model.NoiseOf(cfg.Sim).Draw(5).Factor()
		if f == 1 || math.Abs(got*f/plain-1) > 1e-6 {
			t.Errorf("noise %s: factor %.4f, throughput %.2f → %.2f (×%.5f)", noise, f, plain, got, got/plain)
		}
	}
	// Drift moves the throughput of a level read at another time of the launch.
	cfg := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", "0", "--sim-drift", "0.05", "--sim-drift-tau", "1m")
	early := model.RunVirtual(cfg, load, 5).Throughput
	load.Start = 30 * time.Minute
	if late := model.RunVirtual(cfg, load, 5).Throughput; late == early {
		t.Errorf("drift did not change the throughput half an hour later: %.2f", late)
	}
}

// TestHostDriftDistribution: over many hosts, the host drift at a moment
// has mean 0 and σ Drift, and its correlation one τ apart is exp(−1), as
// the launch drift's; on one host it is a pure function of the time, the
// same for every server that reads it.
func TestHostDriftDistribution(t *testing.T) {
	const n = 4000
	tau := time.Minute
	var sumX, sumX2, sumXY float64
	for s := range uint64(n) {
		h := model.NewHostDrift(0.01, tau, s)
		at := 1.8e9 * 20 // an absolute host clock: Unix seconds at 20×
		x, y := h.At(at), h.At(at+tau.Seconds())
		sumX += x
		sumX2 += x * x
		sumXY += x * y
	}
	mean := sumX / n
	sd := math.Sqrt(sumX2/n - mean*mean)
	corr := (sumXY/n - mean*mean) / (sd * sd)
	if math.Abs(mean) > 0.0007 || math.Abs(sd/0.01-1) > 0.06 {
		t.Errorf("host drift: mean %.5f, σ %.5f; want 0, 0.01", mean, sd)
	}
	if want := math.Exp(-1); math.Abs(corr-want) > 0.06 {
		t.Errorf("host drift correlation one τ apart %.3f, want %.3f", corr, want)
	}
	a, b := model.NewHostDrift(0.01, tau, model.HostSeed("/tmp/host-a")), model.NewHostDrift(0.01, tau, model.HostSeed("/tmp/host-a/"))
	if a.At(12345.6) != b.At(12345.6) || a.At(1) == model.NewHostDrift(0.01, tau, model.HostSeed("/tmp/host-b")).At(1) {
		t.Error("one host must read one path, another host another")
	}
	var none *model.HostDrift
	if none.At(1) != 0 || model.NewHostDrift(0, tau, 1) != nil {
		t.Error("no host drift must be zero")
	}
}

// TestHostDriftVirtual: with the drift's scope the host, a level read at
// another host time reads another speed, and two launches (seeds) read
// the same host at the same time alike.
func TestHostDriftVirtual(t *testing.T) {
	load := model.ClosedLoop{Concurrency: 10, Requests: 40, MaxTokens: 200, PromptTokens: 32}
	cfg := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", "0", "--sim-drift", "0.05", "--sim-drift-scope", "host", "--sim-state", "/tmp/a-host")
	if n := model.NoiseOf(cfg.Sim); !n.Zero() {
		t.Errorf("a host drift must not also be drawn per launch: %+v", n)
	}
	early := model.RunVirtual(cfg, load, 5).Throughput
	if other := model.RunVirtual(cfg, load, 6).Throughput; other != early {
		t.Errorf("two launches on one host at one time: %.3f vs %.3f tok/s", early, other)
	}
	load.Start = 30 * time.Minute
	if late := model.RunVirtual(cfg, load, 5).Throughput; late == early {
		t.Errorf("the host's drift did not change the throughput half an hour later: %.2f", late)
	}
}

var launchLine = regexp.MustCompile(`launch step-time factor ([0-9.]+) \(sigma 0.03\), drift sigma 0.01, tau 2m0s`)

// TestLaunchNoiseServer: the server draws its launch factor from --sim-seed,
// mixed with the launch the orchestrator names, and logs it; the same seed
// and launch draw the same factor, another seed or another launch another.
func TestLaunchNoiseServer(t *testing.T) {
	factor := func(seed, launch string) string {
		env := map[string]string{}
		if launch != "" {
			env[cmdline.LaunchEnv] = launch
		}
		p := startSim(t, env, "--sim-seed", seed, "--sim-launch-sigma", "0.03", "--sim-drift", "0.01", "--sim-drift-tau", "2m")
		if !waitFor(t, 30*time.Second, func() bool { return launchLine.MatchString(p.log.String()) }) {
			t.Fatalf("no launch line in the log:\n%s", simtest.Tail(p.log.String(), 20))
		}
		p.stop()
		if launch != "" && !strings.Contains(p.log.String(), "(--sim-seed mixed with BAKEOFF_LAUNCH="+launch+")") {
			t.Errorf("the log does not say the seed was mixed with the launch:\n%s", simtest.Tail(p.log.String(), 20))
		}
		return launchLine.FindStringSubmatch(p.log.String())[1]
	}
	a, b, c := factor("11", ""), factor("11", ""), factor("12", "")
	if a != b || a == c {
		t.Errorf("launch factors: seed 11 %s and %s, seed 12 %s", a, b, c)
	}
	// A host-wide drift is announced with the host it belongs to.
	p := startSim(t, nil, "--sim-drift", "0.01", "--sim-drift-scope", "host")
	if !waitFor(t, 30*time.Second, func() bool {
		return strings.Contains(p.log.String(), "host drift sigma 0.01, tau 1m0s (simulated), shared by every server on "+p.state)
	}) {
		t.Errorf("no host drift line in the log:\n%s", simtest.Tail(p.log.String(), 20))
	}
	p.stop()
	// One --sim-seed in a campaign: every launch still draws its own.
	l0, l0again, l1 := factor("11", "0"), factor("11", "0"), factor("11", "1")
	if l0 != l0again || l0 == l1 || l0 == a {
		t.Errorf("seed 11: launch 0 %s and %s, launch 1 %s, no launch %s", l0, l0again, l1, a)
	}
}
