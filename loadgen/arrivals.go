package loadgen

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// DefaultBurstiness is the arrival shape when none is given: 1, a Poisson
// process.
const DefaultBurstiness = 1.0

// Arrivals returns when each of n requests of an open-loop level is due, as
// offsets from the level's start, ascending. It is a pure function of its
// arguments: every variant and every round of a campaign that shares the
// sweep seed receives the same arrival times, so none of them is luckier
// in its bursts than another.
//
// The gaps between arrivals follow vLLM's benchmark (vllm/benchmarks/
// serve.py, get_request): Gamma(shape = burstiness, scale = 1/(rate ×
// burstiness)), whose mean is 1/rate whatever the shape and whose
// coefficient of variation is 1/√burstiness. Burstiness 1 is the
// exponential, a Poisson process; below 1 the arrivals come in bursts;
// above 1 they are more even, tending to a constant gap. As there, the
// cumulative times are then rescaled so that the level's mean rate is
// exactly rate: otherwise one seed's level offers a few percent more load
// than another's. Unlike vLLM, which also delays the first request by a
// gap, the first request is due at once, and the n−1 gaps span exactly
// (n−1)/rate, so the rate measured from send times (ArrivalRateOf) is the
// target when the client keeps up.
//
// The stream of random numbers is the sweep seed's, mixed with the level's
// number (measure.Level.Key) and the repeat, so levels and repeats get
// schedules of their own.
func Arrivals(n int, rate, burstiness float64, seed int64, level measure.Level, repeat int) []time.Duration {
	if n <= 0 || rate <= 0 {
		return nil
	}
	if burstiness <= 0 {
		burstiness = DefaultBurstiness
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(level.Key())<<16^uint64(repeat)))
	t := make([]float64, n)
	for i := 1; i < n; i++ {
		t[i] = t[i-1] + gamma(rng, burstiness)/(rate*burstiness)
	}
	out := make([]time.Duration, n)
	if n == 1 || t[n-1] <= 0 {
		return out
	}
	scale := float64(n-1) / rate / t[n-1]
	for i := range t {
		out[i] = time.Duration(math.Round(t[i] * scale * 1e9))
	}
	return out
}

// gamma draws from Gamma(shape k, scale 1): the exponential for k = 1, else
// Marsaglia and Tsang's method ("A simple method for generating gamma
// variables", ACM TOMS 26(3), 2000), with their boost U^(1/k) for k < 1.
func gamma(rng *rand.Rand, k float64) float64 {
	if k == 1 {
		return rng.ExpFloat64()
	}
	if k < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
