package plan

import "math"

// The load generator takes one request count for the whole sweep: with
// `requests: auto`, one multiple of every level's `auto` count. The plans
// below are made in that currency, so that the requests a plan prints are
// the requests its rounds then send. Next and Afford give the optimum per
// level, which a sweep cannot run as it is: rounded up to one multiple it
// sent four times the count printed for some levels.

// NextScaled is Next for requests that are one multiple of every level's
// minimum: over every number of further rounds the goal allows, the
// smallest multiple (at least the multiple at Cochran's optimum,
// ScaleOptimal) with which the sequential rule is expected to have closed
// every open comparison by then (closes), and of those the quickest. When
// none within the bounds does, the plan is the largest multiple at the
// most rounds allowed, with Reached false. Without a
// noise figure (no open comparison has one) nothing says what the margin
// needs: the plan is one more round at the minimum, not Reached, and its
// MDE cannot be estimated.
func NextScaled(in Inputs) Plan {
	if !in.measured() {
		return in.At(1, 1)
	}
	g := in.Goal.withDefaults()
	past := in.pastVar()
	done := len(in.Past)
	top := in.MaxScale()
	floor := min(in.ScaleOptimal(), top)
	best := Plan{Seconds: math.Inf(1)}
	for more := max(g.MinRounds-done, 1); done+more <= g.MaxRounds; more++ {
		if float64(more)*in.RoundSeconds(in.scaled(floor)) >= best.Seconds {
			break // more rounds, even at the least multiple, take longer
		}
		for k := floor; k <= top; k++ {
			n := in.scaled(k)
			if in.closes(g, past, more, n) < half {
				continue
			}
			// A larger multiple only costs more at this number of rounds.
			if t := float64(more) * in.RoundSeconds(n); t < best.Seconds {
				best = in.plan(g, past, more, n)
				best.Scale, best.Reached = k, true
			}
			break
		}
	}
	if !best.Reached {
		best = in.At(max(g.MaxRounds-done, 0), top)
		best.Reached = false
	}
	return in.withStops(best)
}

// AffordScaled is Afford for requests that are one multiple of every
// level's minimum: of every number of further rounds and every multiple
// whose rounds fit in seconds, the plan with the smallest expected MDE.
func AffordScaled(in Inputs, seconds float64) Forecast {
	g := in.Goal.withDefaults()
	past := in.pastVar()
	f := Forecast{BudgetSeconds: seconds, Need: NextScaled(in)}
	f.Enough = f.Need.Reached && f.Need.Seconds <= seconds
	done := len(in.Past)
	top := in.MaxScale()
	best := math.Inf(1)
	for more := 1; done+more <= g.MaxRounds; more++ {
		for k := 1; k <= top; k++ {
			n := in.scaled(k)
			if float64(more)*in.RoundSeconds(n) > seconds {
				break
			}
			if mde := in.mde(g, past, more, n); mde < best {
				best = mde
				f.Plan, f.Fits = in.plan(g, past, more, n), true
				f.Plan.Scale = k
				f.Plan.Reached = in.closes(g, past, more, n) >= half
			}
		}
	}
	if !f.Fits {
		f.Plan = in.At(0, 1)
	}
	f.Plan = in.withStops(f.Plan)
	return f
}

// At is the plan of more further rounds at scale times every level's
// minimum, whatever it reaches: what a campaign that keeps its own
// requests (scale 1), or a fixed design, can expect.
func (in Inputs) At(more, scale int) Plan {
	g := in.Goal.withDefaults()
	scale = max(scale, 1)
	past := in.pastVar()
	p := in.plan(g, past, more, in.scaled(scale))
	p.Scale = scale
	_, ok := MDEFigure(p.MDEPct)
	p.Reached = ok && in.closes(g, past, more, p.Requests) >= half
	return in.withStops(p)
}

// MaxScale is the largest multiple of the minimum every level allows: its
// Max over its Min, at least 1.
func (in Inputs) MaxScale() int {
	lo, hi := in.bounds()
	k := math.MaxInt
	for j := range lo {
		k = min(k, hi[j]/lo[j])
	}
	if k == math.MaxInt {
		return 1
	}
	return max(k, 1)
}

// ScaleOptimal is the multiple of every level's minimum at Cochran's
// optimum for the comparison with the most within-launch noise per
// request, at least 1: the multiple that buys the most precision per
// second when one multiple serves every level. With n_j = k·m_j a round
// costs L + k·Σ m_j c_j, and one round's variance is σ²_L + s²_W/(k·m),
// least in their product at k* = √(L·s²_W / (m·σ²_L·Σ m_j c_j)); of the
// whole multiples beside k*, the one whose product is less. NextScaled
// never plans fewer, for the reason Next keeps its floor (rateOptimal).
func (in Inputs) ScaleOptimal() int {
	lo, _ := in.bounds()
	var perRound float64
	for j, l := range in.Levels {
		perRound += float64(lo[j]) * l.PerRequest
	}
	worst, launch := 0.0, 0.0
	for _, z := range in.Noise {
		if w := z.Within / float64(lo[z.Level]); w > worst {
			worst, launch = w, z.Launch
		}
	}
	k := Cochran(in.Launch, perRound, launch, worst)
	switch {
	case math.IsInf(k, 1):
		return in.MaxScale()
	case k <= 1 || math.IsNaN(k):
		return 1
	}
	// The whole multiple on either side of k* whose time to a given
	// precision is less: the cost is flat near k*, but a multiple is
	// coarse, and rounding 1.2 up to 2 would spend 70% more requests.
	cost := func(k float64) float64 { return (launch + worst/k) * (in.Launch + k*perRound) }
	best := math.Floor(k)
	if cost(best+1) < cost(best) {
		best++
	}
	return min(int(best), in.MaxScale())
}

// measured reports whether any open comparison has a noise figure.
func (in Inputs) measured() bool {
	for _, z := range in.Noise {
		if z.Launch > 0 || z.Within > 0 {
			return true
		}
	}
	return false
}

// scaled is every level's minimum times k.
func (in Inputs) scaled(k int) []int {
	lo, _ := in.bounds()
	for j := range lo {
		lo[j] *= k
	}
	return lo
}
