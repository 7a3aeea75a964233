package rule

import "math"

// FisherGreater is the one-sided p of Fisher's exact test that the first
// of two groups has the larger share: a of n1 against c of n2, it is the
// chance, with the a+c successes dealt at random over the n1+n2 trials, that
// the first group gets a or more (the hypergeometric upper tail).
func FisherGreater(a, n1, c, n2 int) float64 {
	d := a + c
	lchoose := func(n, k int) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(k + 1))
		z, _ := math.Lgamma(float64(n - k + 1))
		return x - y - z
	}
	all := lchoose(n1+n2, d)
	p := 0.0
	for x := max(a, d-n2); x <= min(n1, d); x++ {
		p += math.Exp(lchoose(n1, x) + lchoose(n2, d-x) - all)
	}
	return min(p, 1)
}
