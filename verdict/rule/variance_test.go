package rule

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// twoWay is the textbook two-way ANOVA without replication of a full
// levels × rounds table: the round and residual mean squares.
func twoWay(x [][]float64) (msRound, msResid float64, dfRound, dfResid int) {
	c, r := len(x), len(x[0])
	var grand float64
	RowMean := make([]float64, c)
	colMean := make([]float64, r)
	for i := range c {
		for j := range r {
			grand += x[i][j]
			RowMean[i] += x[i][j] / float64(r)
			colMean[j] += x[i][j] / float64(c)
		}
	}
	grand /= float64(c * r)
	var ssRound, ssResid float64
	for j := range r {
		ssRound += float64(c) * (colMean[j] - grand) * (colMean[j] - grand)
	}
	for i := range c {
		for j := range r {
			e := x[i][j] - RowMean[i] - colMean[j] + grand
			ssResid += e * e
		}
	}
	dfRound, dfResid = r-1, (c-1)*(r-1)
	return ssRound / float64(dfRound), ssResid / float64(dfResid), dfRound, dfResid
}

// sampleCovDF is the textbook form of the effective df for a full table:
// (R−1)·(tr S)²/tr(S²), S the levels' sample covariance over rounds.
func sampleCovDF(x [][]float64) float64 {
	c, r := len(x), len(x[0])
	m := make([]float64, c)
	for i := range c {
		for j := range r {
			m[i] += x[i][j] / float64(r)
		}
	}
	var tr, tr2 float64
	for i := range c {
		for k := range c {
			var s float64
			for j := range r {
				s += (x[i][j] - m[i]) * (x[k][j] - m[k])
			}
			s /= float64(r - 1)
			if i == k {
				tr += s
			}
			tr2 += s * s
		}
	}
	return float64(r-1) * tr * tr / tr2
}

func TestLaunchVarFullTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name         string
		levels, rnds int
		su, se       float64
		dfLo, dfHi   float64 // where the df must fall
	}{
		{"launch effects dominate", 8, 5, 0.02, 0.002, 4, 5},
		{"level noise dominates", 8, 5, 0.001, 0.02, 8, 32},
		{"both", 4, 3, 0.01, 0.01, 2, 8},
		{"one level", 1, 5, 0.01, 0.01, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([][]float64, tc.levels)
			u := make([]float64, tc.rnds)
			for j := range u {
				u[j] = tc.su * rng.NormFloat64()
			}
			for i := range x {
				for j := range tc.rnds {
					x[i] = append(x[i], 0.1*float64(i)+u[j]+tc.se*rng.NormFloat64())
				}
			}
			got := PooledVar(x)
			msR, msE, _, _ := twoWay(x)
			c := float64(tc.levels)
			want := (msR + (c-1)*msE) / c
			if tc.levels == 1 {
				want = msR / c
			}
			wantDF := sampleCovDF(x)
			if math.Abs(got.Var-want) > 1e-12*want || math.Abs(got.DF-wantDF) > 1e-9*wantDF {
				t.Errorf("var %.6g df %.4f, want %.6g and %.4f", got.Var, got.DF, want, wantDF)
			}
			if got.DF < tc.dfLo-1e-9 || got.DF > tc.dfHi+1e-9 {
				t.Errorf("df %.2f outside %g..%g", got.DF, tc.dfLo, tc.dfHi)
			}
			t.Logf("var %.3g df %.1f", got.Var, got.DF)
		})
	}
}

// TestLaunchVarCoverage: the interval a level's mean gets from the pooled
// variance and its effective df holds the truth at 95% of levels or more,
// however the levels of one launch are correlated: one launch effect shared
// by all levels, a drift that carries from level to level, independent
// levels. Three rounds (the fewest the df are estimated from) and six (the
// default). The Satterthwaite df this replaced assumed the first shape (one
// launch effect, independent levels otherwise); on draws of it at three
// rounds its intervals held the truth at 92.5% of levels.
func TestLaunchVarCoverage(t *testing.T) {
	for _, tc := range []struct {
		name            string
		su, sw, phi, se float64 // launch effect, drift (σ, correlation from level to level), level noise
	}{
		{"launch effect", 0.014, 0, 0, 0.005},
		{"drift", 0.007, 0.015, 0.9, 0.005},
		{"independent", 0.003, 0, 0, 0.015},
	} {
		for _, rounds := range []int{3, 6} {
			rng := rand.New(rand.NewPCG(7, uint64(rounds)))
			const campaigns, levels = 2000, 8
			covered := 0
			for range campaigns {
				x := make([][]float64, levels)
				for c := range x {
					x[c] = make([]float64, rounds)
				}
				for r := range rounds {
					u, w := tc.su*rng.NormFloat64(), tc.sw*rng.NormFloat64()
					for c := range levels {
						w = tc.phi*w + math.Sqrt(1-tc.phi*tc.phi)*tc.sw*rng.NormFloat64()
						x[c][r] = u + w + tc.se*rng.NormFloat64()
					}
				}
				lv := PooledVar(x)
				q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: lv.DF}.Quantile(0.975)
				for c := range levels {
					m, n := RowMean(x[c])
					if math.Abs(m) <= q*math.Sqrt(lv.Var/float64(n)) {
						covered++
					}
				}
			}
			rate := float64(covered) / float64(campaigns*levels)
			t.Logf("%s, %d rounds: the 95%% interval holds the truth at %.1f%% of levels", tc.name, rounds, 100*rate)
			if rate < 0.95 {
				t.Errorf("%s, %d rounds: coverage %.1f%%, want ≥ 95%%", tc.name, rounds, 100*rate)
			}
		}
	}
}

func TestLaunchVarHoles(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		x       [][]float64
		wantVar float64
		wantDF  float64
	}{
		{"nothing twice", [][]float64{{1, nan}, {nan, 2}}, 0, 0},
		// One level in two rounds: its own variance, 1 df; the other
		// level's single value adds nothing.
		{"one pair", [][]float64{{1, 3}, {5, nan}}, 2, 1},
		// Adding a round to every level changes nothing when every level
		// moves by the same amount: that is a pure launch effect.
		{"pure launch effect", [][]float64{{0, 1}, {2, 3}, {4, 5}}, 0.5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PooledVar(tc.x)
			if math.Abs(got.Var-tc.wantVar) > 1e-9 || math.Abs(got.DF-tc.wantDF) > 1e-9 {
				t.Errorf("var %g df %g, want %g and %g", got.Var, got.DF, tc.wantVar, tc.wantDF)
			}
		})
	}
}

// A table with holes must agree with the full table's estimate in
// expectation: the mean of the variance over many draws is σ_u² + σ_ε².
func TestLaunchVarHolesUnbiased(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const su, se = 0.01, 0.01
	var sum float64
	const n = 4000
	for range n {
		x := make([][]float64, 6)
		u := make([]float64, 4)
		for j := range u {
			u[j] = su * rng.NormFloat64()
		}
		for i := range x {
			for j := range u {
				v := float64(i) + u[j] + se*rng.NormFloat64()
				if (i+j)%5 == 0 {
					v = math.NaN()
				}
				x[i] = append(x[i], v)
			}
		}
		sum += PooledVar(x).Var
	}
	mean, want := sum/n, su*su+se*se
	if math.Abs(mean-want) > 0.05*want {
		t.Errorf("mean variance %.4g, want %.4g", mean, want)
	}
}

func TestCorrections(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	for _, tc := range []struct {
		method string
		want   []float64
	}{
		// R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") and "Holm".
		{CorrectionBH, []float64{0.02, 0.04, 0.04, 0.02}},
		{CorrectionHolm, []float64{0.03, 0.06, 0.06, 0.02}},
		{CorrectionNone, p},
	} {
		got := Adjust(p, tc.method)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: %v, want %v", tc.method, got, tc.want)
				break
			}
		}
	}
}

func TestLogDiff(t *testing.T) {
	// t with 10 df: two-sided 5% at 2.228, one-sided 5% at 1.812, 20% at 0.8791.
	e := Diff{D: 0.01, SE: 0.01, DF: 10}
	lo, hi := e.Interval(0.95)
	if math.Abs(hi-0.01-0.022281) > 1e-5 || math.Abs(0.01-lo-0.022281) > 1e-5 {
		t.Errorf("95%% interval %g..%g", lo, hi)
	}
	if p := e.P(); math.Abs(p-0.340893) > 1e-5 {
		t.Errorf("p %g, want 0.3409", p)
	}
	if mde := e.MDE(0.05, 0.8); math.Abs(mde-(0.022281+0.008791)) > 1e-5 {
		t.Errorf("MDE %g", mde)
	}
	if !(Diff{D: 0.001, SE: 0.005, DF: 10}).Equivalent(-0.02, 0.02, 0.05) {
		t.Error("0.1% ± 0.9% (90%) is inside ±2%")
	}
	if (Diff{D: 0.012, SE: 0.005, DF: 10}).Equivalent(-0.02, 0.02, 0.05) {
		t.Error("1.2% + 0.9% reaches past 2%")
	}
	if (Diff{D: 0.5}).P() != 1 || (Diff{D: 0.5}).Equivalent(-1, 1, 0.05) {
		t.Error("no error estimate: nothing can be concluded")
	}
	w := Welch([]float64{100, 101, 99, 100}, []float64{110, 111, 109, 110})
	if w.D < 0.09 || w.D > 0.1 || w.DF < 5 || w.DF > 6 || w.P() > 1e-5 {
		t.Errorf("welch %+v p %g", w, w.P())
	}
}

// A level disturbed in one round is judged on its own variance, not lent
// the pooled one; the undisturbed levels keep the pool.
func TestLevelVarNoisyLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([][]float64, 8)
	for i := range x {
		for range 5 {
			x[i] = append(x[i], 0.005*rng.NormFloat64())
		}
	}
	x[3][2] += 0.08 // one launch's C=… ran 8% fast
	lv := PooledVar(x)
	for i := range x {
		_, df, noisy := LevelVar(x, i, lv)
		if noisy != (i == 3) {
			t.Errorf("level %d: noisy %v (df %.1f)", i, noisy, df)
		}
		if noisy && df != 4 {
			t.Errorf("noisy level df %g, want 4", df)
		}
	}
}
