package model

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// DefaultDriftTau is the correlation time of the slow drift when
// --sim-drift-tau is not given: simulated time, about one sweep level of the
// seeds' campaign (30–280 requests of 200 tokens take 40–80 s), so that the
// drift moves between levels and between the scenarios of one round but
// hardly inside one sample.
const DefaultDriftTau = 60 * time.Second

// driftGridPerTau is how many points of the drift's path are drawn per
// correlation time; the path is linear between them.
const driftGridPerTau = 16

// LaunchNoise is the slow part of the sim's noise: what stays the same for a
// whole launch, or changes over minutes, so that no number of requests inside
// one launch averages it away. The per-step noise (--sim-noise) is separate.
//
// Step time is multiplied by Factor × exp(x(t)), where Factor = exp(σ·z) is
// drawn once per launch (z ~ N(0,1), σ = Sigma: median and geometric mean 1,
// so a launch is as likely 1% faster as 1% slower) and x is an
// Ornstein–Uhlenbeck process in simulated time t since the launch began,
// stationary with mean 0 and standard deviation Drift, correlation
// exp(−Δt/Tau), started from its stationary law (a launch does not begin at
// the mean). Both are pure functions of the seed and t: the same seed draws
// the same launch whatever the machine's timing.
type LaunchNoise struct {
	// Sigma is σ of the log of the per-launch step-time factor (0.01 ≈ a
	// launch 1% faster or slower, one σ).
	Sigma float64
	// Drift is the stationary σ of the log of the drift factor.
	Drift float64
	// Tau is the drift's correlation time, simulated; 0 means DefaultDriftTau.
	Tau time.Duration
}

// NoiseOf is the launch noise the sim options ask for; with the drift's
// scope the host, the drift is the host's (HostDrift), not the launch's.
func NoiseOf(o cmdline.SimOptions) LaunchNoise {
	n := LaunchNoise{Sigma: o.LaunchSigma, Drift: o.Drift, Tau: o.DriftTau}
	if o.HostDrift {
		n.Drift = 0
	}
	return n
}

// TauOrDefault is Tau, or DefaultDriftTau when Tau is not set.
func (n LaunchNoise) TauOrDefault() time.Duration {
	if n.Tau > 0 {
		return n.Tau
	}
	return DefaultDriftTau
}

// Zero reports whether the noise does nothing.
func (n LaunchNoise) Zero() bool { return n.Sigma <= 0 && n.Drift <= 0 }

// Launch is one launch's draw of LaunchNoise. A nil *Launch is no noise.
// It is not safe for concurrent use.
type Launch struct {
	factor float64
	drift  float64
	grid   time.Duration // spacing of path's points
	a      float64       // exp(−grid/tau): the OU step's correlation
	path   []float64     // x at 0, grid, 2·grid, …, drawn as needed
	rng    *rand.Rand
}

// Draw draws one launch from seed. Its stream of random numbers is its own:
// the step noise and accept lengths seeded with the same number are not
// shifted by it, so turning launch noise on changes nothing else.
func (n LaunchNoise) Draw(seed uint64) *Launch {
	rng := rand.New(rand.NewPCG(seed, seed^0x1a0c4_d21f7))
	l := &Launch{factor: 1, rng: rng}
	z := rng.NormFloat64() // drawn even when Sigma is 0, so the drift's path does not depend on Sigma
	if n.Sigma > 0 {
		l.factor = math.Exp(n.Sigma * z)
	}
	if n.Drift > 0 {
		tau := n.TauOrDefault()
		l.drift = n.Drift
		l.grid = max(tau/driftGridPerTau, time.Microsecond)
		l.a = math.Exp(-float64(l.grid) / float64(tau))
		l.path = []float64{n.Drift * rng.NormFloat64()}
	}
	return l
}

// Factor is the launch's constant step-time factor (1 without Sigma).
func (l *Launch) Factor() float64 {
	if l == nil {
		return 1
	}
	return l.factor
}

// DriftAt is the drift's log step-time offset x(t) at simulated time t since
// the launch began (0 without Drift, and before t = 0).
func (l *Launch) DriftAt(t time.Duration) float64 {
	if l == nil || l.drift <= 0 || t <= 0 {
		return 0
	}
	i := int(t / l.grid)
	for len(l.path) <= i+1 {
		x := l.path[len(l.path)-1]
		l.path = append(l.path, l.a*x+math.Sqrt(1-l.a*l.a)*l.drift*l.rng.NormFloat64())
	}
	f := float64(t-time.Duration(i)*l.grid) / float64(l.grid)
	return (1-f)*l.path[i] + f*l.path[i+1]
}

// At is the step-time multiplier at simulated time t since the launch
// began: Factor × exp(DriftAt(t)). Throughput scales with its inverse.
func (l *Launch) At(t time.Duration) float64 {
	if l == nil {
		return 1
	}
	return l.factor * math.Exp(l.DriftAt(t))
}

// Scale multiplies a step's duration d, starting at simulated time t, by
// At(t).
func (l *Launch) Scale(d, t time.Duration) time.Duration {
	if l == nil {
		return d
	}
	return time.Duration(float64(d) * l.At(t))
}

// hostDriftTerms is how many cosines make up a host's drift path.
const hostDriftTerms = 64

// HostDrift is a drift that belongs to the host rather than to one launch
// (--sim-drift-scope host): every server on the same fake host reads the
// same path at the same moment, so the drift goes on from one launch to the
// next as a room's temperature does. Its log step-time offset at host time
// t is σ·√(2/K)·Σ cos(ω_k·t + φ_k) over K terms with ω_k drawn from a Cauchy
// law of scale 1/τ and φ_k uniform: a stationary path with mean 0, standard
// deviation σ and, over hosts, correlation exp(−|Δt|/τ), the covariance of
// the launch drift's Ornstein–Uhlenbeck process. It is a pure function of
// the seed and t, so it needs no state shared between processes.
type HostDrift struct {
	amp   float64
	omega [hostDriftTerms]float64 // rad per simulated second
	phase [hostDriftTerms]float64
}

// NewHostDrift draws a host's drift path of stationary σ sigma and
// correlation time tau from seed.
func NewHostDrift(sigma float64, tau time.Duration, seed uint64) *HostDrift {
	if sigma <= 0 {
		return nil
	}
	if tau <= 0 {
		tau = DefaultDriftTau
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x4057_d21f7))
	h := &HostDrift{amp: sigma * math.Sqrt(2.0/hostDriftTerms)}
	for k := range hostDriftTerms {
		h.omega[k] = math.Tan(math.Pi*(rng.Float64()-0.5)) / tau.Seconds()
		h.phase[k] = 2 * math.Pi * rng.Float64()
	}
	return h
}

// At is the log step-time offset at host time t, simulated seconds on the
// host's clock (0 for a nil HostDrift).
func (h *HostDrift) At(t float64) float64 {
	if h == nil {
		return 0
	}
	var x float64
	for k := range hostDriftTerms {
		x += math.Cos(h.omega[k]*t + h.phase[k])
	}
	return h.amp * x
}

// HostSeed is the seed of the drift of the fake host whose memory registry
// is stateDir: the servers that share a host share its drift.
func HostSeed(stateDir string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(filepath.Clean(stateDir)))
	return h.Sum64()
}
