package plan

import "math"

// Cochran is the requests per level that minimise the time to reach any
// given precision when one launch costs launch seconds plus perRequest
// seconds per request, and one round's variance is launchVar + withinVar/n:
// the time is proportional to (launchVar + withinVar/n)(launch + n·perRequest),
// least at n* = √(launch·withinVar / (perRequest·launchVar)) (Cochran's
// two-stage optimum). +Inf when launchVar is zero: then only requests
// matter, and the cap decides.
func Cochran(launch, perRequest, launchVar, withinVar float64) float64 {
	if withinVar <= 0 || launch <= 0 {
		return 0
	}
	if launchVar <= 0 || perRequest <= 0 {
		return math.Inf(1)
	}
	return math.Sqrt(launch * withinVar / (perRequest * launchVar))
}

// CochranLevels generalises Cochran to levels that share rounds and one
// launch variance: with per-request costs c[j] and within-launch variances
// s2[j], the optimum gives every level the same within-launch part x of
// one round's variance, n[j] = s2[j]/x with x = √(launchVar·Σ c[j]s2[j] /
// launch). It is the unclamped optimum; Next finds the clamped, integer one.
func CochranLevels(launch, launchVar float64, c, s2 []float64) []float64 {
	n := make([]float64, len(c))
	var k float64
	for j := range c {
		k += c[j] * s2[j]
	}
	if k <= 0 || launch <= 0 {
		return n
	}
	x := math.Sqrt(launchVar * k / launch)
	for j := range n {
		if s2[j] <= 0 {
			continue
		}
		if x <= 0 {
			n[j] = math.Inf(1)
			continue
		}
		n[j] = s2[j] / x
	}
	return n
}
