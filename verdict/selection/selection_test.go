package selection

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestOptionsNormalise(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		k    int
		want Options
		err  string
	}{
		{name: "defaults, 24", o: Options{}, k: 24, want: Options{Delta: 0.02, PCS: 0.95, FirstStage: 2}},
		{name: "defaults, 3", o: Options{}, k: 3, want: Options{Delta: 0.02, PCS: 0.95, FirstStage: 6}},
		{name: "kept", o: Options{Delta: 0.05, PCS: 0.9, FirstStage: 4, MaxRounds: 12}, k: 24, want: Options{Delta: 0.05, PCS: 0.9, FirstStage: 4, MaxRounds: 12}},
		{name: "delta of 1", o: Options{Delta: 1}, k: 24, err: "delta 1"},
		{name: "negative delta", o: Options{Delta: -0.02}, k: 24, err: "delta -0.02"},
		{name: "pcs of a guess", o: Options{PCS: 0.25}, k: 4, err: "pcs 0.25"},
		{name: "pcs of 1", o: Options{PCS: 1}, k: 4, err: "pcs 1"},
		{name: "first stage of 1", o: Options{FirstStage: 1}, k: 24, err: "first stage of 1"},
		{name: "max below the first stage", o: Options{FirstStage: 3, MaxRounds: 2}, k: 24, err: "max rounds 2"},
		{name: "negative max", o: Options{MaxRounds: -1}, k: 24, err: "max rounds -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.o.normalise(tc.k)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDefaultFirstStage(t *testing.T) {
	for _, tc := range []struct{ k, want int }{
		{2, 11}, {3, 6}, {6, 3}, {10, 3}, {11, 2}, {12, 2}, {24, 2}, {48, 2},
	} {
		n0 := DefaultFirstStage(tc.k)
		if n0 != tc.want {
			t.Errorf("k=%d: first stage %d, want %d", tc.k, n0, tc.want)
		}
		if df := (tc.k - 1) * (n0 - 1); df < minFirstStageDF {
			t.Errorf("k=%d: %d df, fewer than %d", tc.k, df, minFirstStageDF)
		}
	}
}

// TestH2: h² makes the chance that one configuration δ worse rules out the
// best, ½·E[exp(−h²·χ²_ν/(2ν))] = ½(1 + h²/ν)^(−ν/2), exactly β; with n0 − 1
// for ν it is KN's 2η(n0 − 1); and it falls towards the known-variance
// value 2·ln(1/(2β)) as the df grow.
func TestH2(t *testing.T) {
	for _, tc := range []struct {
		k, df int
		pcs   float64
	}{
		{24, 23, 0.95}, {48, 47, 0.95}, {12, 11, 0.95}, {2, 10, 0.95}, {24, 23, 0.99}, {3, 2, 0.95},
	} {
		h := h2(tc.k, tc.df, tc.pcs)
		beta := (1 - tc.pcs) / float64(tc.k-1)
		nu := float64(tc.df)
		if got := 0.5 * math.Pow(1+h/nu, -nu/2); math.Abs(got-beta) > 1e-12*beta+1e-15 {
			t.Errorf("k=%d df=%d: error per competitor %g, want β = %g", tc.k, tc.df, got, beta)
		}
		eta := 0.5 * (math.Pow(2*beta, -2/nu) - 1) // KN's η with n0 − 1 = ν
		if kn := 2 * eta * nu; math.Abs(kn-h) > 1e-9*h {
			t.Errorf("k=%d df=%d: h² %g, KN's %g", tc.k, tc.df, h, kn)
		}
		known := 2 * math.Log(1/(2*beta))
		if more := h2(tc.k, 100*tc.df, tc.pcs); !(known < more && more < h) || more-known > 0.02*known {
			t.Errorf("k=%d df=%d: h² %g at df, %g at 100×df, known variance %g: want decreasing to it", tc.k, tc.df, h, more, known)
		}
	}
	// The figures the default first stage's comment quotes.
	for _, tc := range []struct {
		df   int
		want float64
	}{{23, 13.9}, {15, 16.0}, {10, 19.7}} {
		if got := h2(24, tc.df, 0.95); math.Abs(got-tc.want) > 0.05 {
			t.Errorf("24 configurations, %d df: h² %.2f, want %.1f", tc.df, got, tc.want)
		}
	}
}

func TestAllowance(t *testing.T) {
	const h, s2, delta = 13.9, 0.0004, 0.0198
	n := closeRound(h, s2, delta)
	prev := math.Inf(1)
	for r := 2; r <= n+3; r++ {
		w := allowance(r, h, s2, delta)
		switch {
		case w > prev:
			t.Fatalf("allowance grows from %g to %g at round %d", prev, w, r)
		case r < n && w <= 0:
			t.Fatalf("allowance %g at round %d, before the close at %d", w, r, n)
		case r >= n && w != 0:
			t.Fatalf("allowance %g at round %d, at or after the close at %d", w, r, n)
		}
		prev = w
	}
	// KN's form: r·W(r) is the triangle a − λr with a = h²·2s2/(2δ), λ = δ/2.
	a := h * 2 * s2 / (2 * delta)
	if got, want := 5*allowance(5, h, s2, delta), a-delta/2*5; math.Abs(got-want) > 1e-12 {
		t.Errorf("5·W(5) = %g, want %g", got, want)
	}
}

// TestPooledVariance: the residual mean square of the table is half the
// mean over pairs of the variance of their within-round differences, and a
// round's effect on every configuration leaves it unchanged.
func TestPooledVariance(t *testing.T) {
	x := [][]float64{
		{0.10, 0.31, -0.20, 0.05},
		{0.13, 0.27, -0.22, 0.11},
		{0.08, 0.35, -0.15, 0.02},
	}
	var pairs, sum float64
	for i := range x[0] {
		for l := i + 1; l < len(x[0]); l++ {
			d := make([]float64, len(x))
			var m float64
			for j := range x {
				d[j] = x[j][i] - x[j][l]
				m += d[j] / float64(len(x))
			}
			var ss float64
			for _, v := range d {
				ss += (v - m) * (v - m)
			}
			sum += ss / float64(len(x)-1)
			pairs++
		}
	}
	got := pooledVariance(x)
	if want := sum / pairs / 2; math.Abs(got-want) > 1e-15 {
		t.Errorf("pooled variance %g, want half the mean pairwise %g", got, want)
	}
	shifted := make([][]float64, len(x))
	for j, row := range x {
		for _, y := range row {
			shifted[j] = append(shifted[j], y+0.7*float64(j*j))
		}
	}
	if s := pooledVariance(shifted); math.Abs(s-got) > 1e-12 {
		t.Errorf("round effects moved the pooled variance from %g to %g", got, s)
	}
}

// A hand-made race: three configurations at two levels, first stage two
// rounds, every figure its true mean plus a round effect, and in the first
// stage ±a on A and B (pooled variance 2a²). A leads level 1 (B 10% behind,
// C 50%), B leads level 2 (C 1% behind, A 50%).
var (
	handConfigs = []string{"A", "B", "C"}
	handLevels  = []string{"L1", "L2"}
	handTruth   = [][]float64{{0, -0.5}, {-0.10, 0}, {-0.50, -0.01}}
)

const handA = 0.0127

var handOptions = Options{FirstStage: 2}

// handRound is round r (1-based) of the hand-made race with the
// configurations in launch; stopped ones get junk when junk is set.
func handRound(r int, launch []string, junk bool) Round {
	out := make(Round, len(handConfigs))
	for i, name := range handConfigs {
		if !slices.Contains(launch, name) {
			if junk {
				out[i] = []float64{9, -9}
			}
			continue
		}
		e := 0.0
		if r <= 2 && i < 2 {
			e = handA * float64(1-2*((r+i)%2)) // A: −a, +a; B: +a, −a
		}
		for c := range handLevels {
			out[i] = append(out[i], handTruth[i][c]+0.3*float64(r)+e)
		}
	}
	return out
}

// handRace runs the hand-made race to its end, launching what the racer
// asks for; junk gives the stopped configurations figures anyway.
func handRace(t *testing.T, o Options, junk bool) (Race, *Result) {
	t.Helper()
	rc, err := NewRacer(handConfigs, handLevels, o)
	if err != nil {
		t.Fatal(err)
	}
	race := Race{Configs: handConfigs, Levels: handLevels}
	for r := 1; !rc.Done(); r++ {
		round := handRound(r, rc.Next(), junk)
		race.Rounds = append(race.Rounds, round)
		if err := rc.Add(round); err != nil {
			t.Fatal(err)
		}
	}
	res, err := rc.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	return race, res
}

// firstBelow is the first round from 2 at which the hand race's allowance
// is below gap.
func firstBelow(gap float64) int {
	h := h2(3, 2, DefaultPCS)
	for r := 2; ; r++ {
		if allowance(r, h, 2*handA*handA, math.Log1p(DefaultDelta)) < gap {
			return r
		}
	}
}

// TestEliminationOrder: who is ruled out where, when, by whom and by how
// much; who is launched after; and a configuration stops being launched
// once no level it is live at is undecided.
func TestEliminationOrder(t *testing.T) {
	_, res := handRace(t, handOptions, false)
	rB, rC := firstBelow(0.10), firstBelow(0.01)
	if rB <= 2 || rC <= rB {
		t.Fatalf("the hand race's variance gives rounds %d and %d: pick another a", rB, rC)
	}
	type elim struct {
		config, level string
		round         int
		by            string
		gap           float64
	}
	want := []elim{
		{"C", "L1", 2, "A", 0.50},
		{"A", "L2", 2, "B", 0.50},
		{"B", "L1", rB, "A", 0.10},
		{"C", "L2", rC, "B", 0.01},
	}
	if len(res.Eliminations) != len(want) {
		t.Fatalf("eliminations %+v, want %+v", res.Eliminations, want)
	}
	for j, w := range want {
		e := res.Eliminations[j]
		if e.Config != w.config || e.Level != w.level || e.Round != w.round || e.By != w.by ||
			math.Abs(e.GapPct-pct(w.gap)) > 1e-9 || !(e.AllowancePct < e.GapPct) {
			t.Errorf("elimination %d: %+v, want %+v", j, e, w)
		}
	}
	if !res.Done || res.Rounds != rC || len(res.Next) != 0 {
		t.Errorf("done %v after %d rounds, next %v; want done after %d", res.Done, res.Rounds, res.Next, rC)
	}
	// A is launched until level 1 is decided, after round rB; B and C to
	// the end for level 2.
	if want := []int{rB, rC, rC}; !slices.Equal(res.Launches, want) {
		t.Errorf("launches %v, want %v", res.Launches, want)
	}
	for _, l := range res.Looks {
		want := []string{"A", "B", "C"}
		if l.Round > rB {
			want = []string{"B", "C"}
		}
		if !slices.Equal(l.Launched, want) {
			t.Errorf("round %d launched %v, want %v", l.Round, l.Launched, want)
		}
		if (l.AllowancePct == nil) != (l.Round < 2) {
			t.Errorf("round %d: allowance %v", l.Round, l.AllowancePct)
		}
	}
	for c, want := range []struct{ sel, ru string }{{"A", "B"}, {"B", "C"}} {
		lr := res.Levels[c]
		if lr.Selected != want.sel || lr.RunnerUp != want.ru || lr.Truncated || !slices.Equal(lr.Live, []string{want.sel}) {
			t.Errorf("level %s: %+v, want %s selected over %s", lr.Level, lr, want.sel, want.ru)
		}
	}
	if got := res.Levels[0].RaceGapPct; math.Abs(got-pct(0.10)) > 1e-9 {
		t.Errorf("race gap at L1 %.4f%%, want %.4f%%", got, pct(0.10))
	}
	if want := []string{"A", "B", "C"}; !slices.Equal(res.Confirm, want) {
		t.Errorf("confirmation set %v, want %v", res.Confirm, want)
	}
}

// TestLaterDataUnused: figures a stopped configuration has anyway (a
// campaign run longer than the race) change nothing, and Run replays the
// looks the racer took.
func TestLaterDataUnused(t *testing.T) {
	race, live := handRace(t, handOptions, false)
	junkRace, _ := handRace(t, handOptions, true)
	junkRace.Rounds = append(junkRace.Rounds, handRound(len(junkRace.Rounds)+1, handConfigs, false))
	for _, rc := range []Race{race, junkRace} {
		got, err := Run(rc, handOptions)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, live) {
			t.Errorf("replayed result differs:\n%+v\nwant\n%+v", got, live)
		}
	}
}

// TestTruncated: a maximum cuts level 2 off with B and C live (1% apart):
// B, the better mean, is selected, C is near, and C is B's runner-up.
func TestTruncated(t *testing.T) {
	o := handOptions
	o.MaxRounds = 8
	_, res := handRace(t, o, false)
	if !res.Done || res.Rounds != 8 {
		t.Fatalf("done %v after %d rounds, want done after 8", res.Done, res.Rounds)
	}
	lr := res.Levels[1]
	if !lr.Truncated || lr.Selected != "B" || lr.RunnerUp != "C" || !slices.Equal(lr.Live, []string{"B", "C"}) || !slices.Equal(lr.Near, []string{"B", "C"}) {
		t.Errorf("level 2: %+v", lr)
	}
	if lr.DecidedAfter != 8 || lr.CloseRound <= 8 {
		t.Errorf("level 2 decided after %d, closes at %d", lr.DecidedAfter, lr.CloseRound)
	}
}

// TestConfirmation: the advantage and the envelope come from the
// confirmation rounds alone, with the first stage's variance.
func TestConfirmation(t *testing.T) {
	race, _ := handRace(t, handOptions, false)
	// Two confirmation rounds: at L1 A leads B by 3% then 5%; at L2 B leads
	// C by 1% then 3%; A is 40% behind B at L2.
	race.Confirm = []Round{
		{{0.03, -0.40}, {0, 0}, {-0.5, -0.01}},
		{{0.55, 0.10}, {0.50, 0.50}, {0, 0.47}},
	}
	res, err := Run(race, handOptions)
	if err != nil {
		t.Fatal(err)
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 2}.Quantile(0.975) * math.Sqrt(2*2*handA*handA/2)
	for c, want := range []float64{0.04, 0.02} {
		a := res.Levels[c].Advantage
		if a == nil || a.Rounds != 2 || a.DF != 2 || math.Abs(a.Pct-pct(want)) > 1e-9 ||
			math.Abs(a.LoPct-pct(want-half)) > 1e-9 || math.Abs(a.HiPct-pct(want+half)) > 1e-9 {
			t.Errorf("level %d: advantage %+v, want %.2f%% ± %.4f in log", c+1, a, pct(want), half)
		}
	}
	env := res.Envelope
	// The single best is B (−5% over the levels, A −25%, C −25.5%); the
	// envelope is A over B at L1 (3%, 5%) and nothing at L2, over two levels.
	if env == nil || env.Single != "B" || env.Confirmed == nil || math.Abs(env.Confirmed.Pct-pct(0.02)) > 1e-9 {
		t.Fatalf("envelope %+v, want B as the single and 2%% over it", env)
	}
	if want := pct(0.05); math.Abs(env.RacePct-want) > 1e-9 {
		t.Errorf("race envelope %.4f%%, want %.4f%%", env.RacePct, want)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("the result does not encode: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	base, _ := handRace(t, handOptions, false)
	good := func() Race { // a deep copy of base, for a case to spoil
		r := base
		r.Rounds = make([]Round, len(base.Rounds))
		for j, round := range base.Rounds {
			r.Rounds[j] = make(Round, len(round))
			for i, row := range round {
				r.Rounds[j][i] = slices.Clone(row)
			}
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		race   func() Race
		o      Options
		substr string
	}{
		{name: "one configuration", race: func() Race { return Race{Configs: []string{"A"}, Levels: handLevels} }, substr: "at least 2"},
		{name: "no levels", race: func() Race { return Race{Configs: handConfigs} }, substr: "no levels"},
		{name: "repeated name", race: func() Race { return Race{Configs: []string{"A", "A"}, Levels: handLevels} }, substr: `"A" is empty or repeated`},
		{name: "bad options", race: good, o: Options{PCS: 2}, substr: "pcs 2"},
		{name: "a live configuration missing", race: func() Race {
			r := good()
			r.Rounds[3][1] = nil
			return r
		}, o: handOptions, substr: `round 4: configuration "B" has no figure at level "L1"`},
		{name: "a live level missing", race: func() Race {
			r := good()
			r.Rounds[0][2] = []float64{0, math.NaN()}
			return r
		}, o: handOptions, substr: `round 1: configuration "C" has no figure at level "L2"`},
		{name: "a short row", race: func() Race {
			r := good()
			r.Rounds[1][0] = []float64{0}
			return r
		}, o: handOptions, substr: `round 2: configuration "A" has 1 figures for 2 levels`},
		{name: "a confirmation round short of the set", race: func() Race {
			r := good()
			r.Confirm = []Round{{{0, 0}, {0, 0}}}
			return r
		}, o: handOptions, substr: `confirmation round 1: no figures for configuration "C"`},
		{name: "a confirmation figure missing", race: func() Race {
			r := good()
			r.Confirm = []Round{{{0, 0}, {0, math.Inf(1)}, {0, 0}}}
			return r
		}, o: handOptions, substr: `confirmation round 1: configuration "B" has no figure at level "L2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(tc.race(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.substr) {
				t.Fatalf("error %v, want one containing %q", err, tc.substr)
			}
		})
	}
}

// TestRacerInProgress: before the race ends Next names the configurations
// to launch, the result has no confirmation set or envelope, and adding to
// a finished race is an error.
func TestRacerInProgress(t *testing.T) {
	rc, err := NewRacer(handConfigs, handLevels, Options{FirstStage: 2, MaxRounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := rc.Next(); !slices.Equal(got, handConfigs) {
		t.Fatalf("first round launches %v, want all", got)
	}
	if err := rc.Add(handRound(1, handConfigs, false)); err != nil {
		t.Fatal(err)
	}
	res, err := rc.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || res.Confirm != nil || res.Envelope != nil || len(res.Eliminations) != 0 || res.Levels[0].SDPct != 0 {
		t.Errorf("after the first round: %+v", res)
	}
	if err := rc.Add(handRound(2, handConfigs, false)); err != nil {
		t.Fatal(err)
	}
	if !rc.Done() || rc.Next() != nil {
		t.Fatalf("not done at the maximum")
	}
	if err := rc.Add(handRound(3, handConfigs, false)); err == nil || !strings.Contains(err.Error(), "the race is over") {
		t.Errorf("adding to a finished race: %v", err)
	}
}

// TestDecidedLevelNeedsNoFigures: a configuration launched for a level
// still open needs no figure at a level already decided, even the one it
// won.
func TestDecidedLevelNeedsNoFigures(t *testing.T) {
	// A wins L1 by far after the first stage; at L2 A and B are 1% apart.
	truth := [][]float64{{0, 0}, {-0.5, -0.01}, {-0.5, -0.5}}
	rc, err := NewRacer(handConfigs, handLevels, handOptions)
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 4; r++ {
		round := make(Round, 3)
		for _, name := range rc.Next() {
			i := slices.Index(handConfigs, name)
			e := 0.0
			if r <= 2 && i < 2 {
				e = handA * float64(1-2*((r+i)%2))
			}
			round[i] = []float64{truth[i][0] + e, truth[i][1] + e}
			if r > 2 {
				round[i][0] = math.NaN()
			}
		}
		if err := rc.Add(round); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if r == 2 && !slices.Equal(rc.Next(), []string{"A", "B"}) {
			t.Fatalf("after round 2 launching %v, want A and B", rc.Next())
		}
	}
	res, err := rc.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	if lr := res.Levels[0]; lr.Selected != "A" || lr.DecidedAfter != 2 || math.IsNaN(lr.RaceGapPct) {
		t.Errorf("level 1: %+v", lr)
	}
}

// TestVarianceUpdate: a first stage quieter than the rounds after it gives
// way to the variance of all the rounds, once that allows more; a first
// stage as noisy as the rest is kept (the hand race's later rounds have no
// noise at all).
func TestVarianceUpdate(t *testing.T) {
	configs, levels := []string{"A", "B", "C"}, []string{"L"}
	rc, err := NewRacer(configs, levels, Options{FirstStage: 2, MaxRounds: 6})
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 6; r++ {
		a := 0.01 // the first stage's noise, then ten times more
		if r > 2 {
			a = 0.1
		}
		round := Round{{a * float64(r%2*2-1)}, {-a * float64(r%2*2-1)}, {0}}
		if err := rc.Add(round); err != nil {
			t.Fatal(err)
		}
		if r > 2 {
			if !(rc.lastS2[0] > rc.s2[0] && rc.lastH2[0] < rc.h2) {
				t.Errorf("round %d: variance %g (first stage %g), h² %g (first stage %g): want the update's", r, rc.lastS2[0], rc.s2[0], rc.lastH2[0], rc.h2)
			}
			if got, kn := rc.allow[0], allowance(r, rc.h2, rc.s2[0], rc.delta); !(got > kn) {
				t.Errorf("round %d: allowance %g, no more than KN's %g", r, got, kn)
			}
		}
	}
	_, res := handRace(t, handOptions, false)
	rcHand, err := NewRacer(handConfigs, handLevels, handOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, round := range []Round{handRound(1, handConfigs, false), handRound(2, handConfigs, false), handRound(3, []string{"A", "B", "C"}, false)} {
		if err := rcHand.Add(round); err != nil {
			t.Fatal(err)
		}
	}
	if rcHand.lastS2[0] != rcHand.s2[0] || rcHand.lastH2[0] != rcHand.h2 {
		t.Errorf("quiet later rounds replaced the first stage's variance: %g for %g", rcHand.lastS2[0], rcHand.s2[0])
	}
	if want := 100 * math.Sqrt(2*handA*handA); math.Abs(res.Levels[0].SDPct-want) > 1e-9 {
		t.Errorf("reported sd %.4f%%, want the first stage's %.4f%%", res.Levels[0].SDPct, want)
	}
}

// TestWithdraw: a configuration cannot be withdrawn during the first
// stage; after it, withdrawing one takes it out at every open level, the
// next rounds do not want it, and a level left with one configuration is
// decided.
func TestWithdraw(t *testing.T) {
	r, err := NewRacer([]string{"a", "b"}, []string{"C=1"}, Options{FirstStage: 2, MaxRounds: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Withdraw("b"); err == nil {
		t.Error("withdrawn during the first stage")
	}
	for _, y := range [][]float64{{0, 0.01}, {0.01, 0}} {
		if err := r.Add(Round{{y[0]}, {y[1]}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Withdraw("nobody"); err == nil {
		t.Error("an unknown configuration withdrawn")
	}
	if err := r.Withdraw("b"); err != nil {
		t.Fatal(err)
	}
	if !r.Done() || len(r.Next()) != 0 {
		t.Errorf("one configuration left: done %v, next %v", r.Done(), r.Next())
	}
	res, err := r.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Eliminations) != 1 || !res.Eliminations[0].Withdrawn || res.Levels[0].Selected != "a" {
		t.Errorf("eliminations %+v, selected %q", res.Eliminations, res.Levels[0].Selected)
	}
}

// TestLoadLevels: a level after the loads (the SLO capacity) is raced, but
// the envelope and the best single configuration are over the loads alone:
// the same as a race of the loads, though the extra level's best is another
// configuration by far.
func TestLoadLevels(t *testing.T) {
	wob := []float64{0.004, -0.006, 0.002, -0.001, 0.005, -0.003}
	truth := [][]float64{{100, 900, 10}, {104, 800, 10}, {80, 500, 90}}
	build := func(levels int) Race {
		race := Race{Configs: []string{"a", "b", "c"}, Levels: []string{"C=1", "C=64", "capacity"}[:levels]}
		for r := range 8 {
			round := make(Round, 3)
			for i := range 3 {
				for c := range levels {
					round[i] = append(round[i], math.Log(truth[i][c])+wob[(r+2*i+c)%len(wob)])
				}
			}
			if r < 6 {
				race.Rounds = append(race.Rounds, round)
			} else {
				race.Confirm = append(race.Confirm, round)
			}
		}
		return race
	}
	o := Options{Delta: 0.02, FirstStage: 2, MaxRounds: 6}
	loads, err := Run(build(2), o)
	if err != nil {
		t.Fatal(err)
	}
	o.LoadLevels = 2
	all, err := Run(build(3), o)
	if err != nil {
		t.Fatal(err)
	}
	if all.Levels[2].Selected != "c" {
		t.Errorf("the extra level selected %s, want c", all.Levels[2].Selected)
	}
	if loads.Envelope == nil || all.Envelope == nil || all.Envelope.Single != loads.Envelope.Single || all.Envelope.RacePct != loads.Envelope.RacePct {
		t.Errorf("envelope %+v with the extra level, %+v without", all.Envelope, loads.Envelope)
	}
	o.LoadLevels = 0
	mixed, err := Run(build(3), o)
	if err != nil {
		t.Fatal(err)
	}
	if mixed.Envelope.RacePct == loads.Envelope.RacePct {
		t.Errorf("the extra level counted as a load changed nothing: the test cannot tell")
	}
}

// TestGuaranteeRounds: the planner's figure is the race's own close round
// for a pair variance it is told: h² of k configurations and the first
// stage's pooled df, times the pair variance over delta².
func TestGuaranteeRounds(t *testing.T) {
	pairVar := 2 * 0.02 * 0.02 // two launches of 2% each
	want := closeRound(h2(24, 23, 0.95), pairVar/2, 0.02)
	if got := GuaranteeRounds(24, 2, 0.95, 0.02, pairVar); got != want || got != 28 {
		t.Errorf("24 configurations at 2%%: %d rounds, want %d (h² %.1f × 2 × 0.0004 / 0.0004)", got, want, h2(24, 23, 0.95))
	}
	// A wider zone closes sooner, by its square.
	if a, b := GuaranteeRounds(24, 2, 0, 0.02, pairVar), GuaranteeRounds(24, 2, 0, 0.04, pairVar); b != (a+3)/4 && b != a/4+1 {
		t.Errorf("delta 2%%: %d rounds, 4%%: %d; want about a quarter", a, b)
	}
	if GuaranteeRounds(1, 2, 0.95, 0.02, pairVar) != 0 || GuaranteeRounds(24, 2, 0.95, 0.02, 0) != 0 {
		t.Error("a figure without two configurations or a variance")
	}
}
