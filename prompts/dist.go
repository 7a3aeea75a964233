package prompts

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Distribution kinds for Dist.Kind.
const (
	DistFixed   = "fixed"
	DistUniform = "uniform"
	DistNormal  = "normal"
)

// MaxLength bounds any length a distribution may give, in tokens: far above
// any context window, low enough that a typo (an extra zero or three) is
// refused instead of building a gigabyte prompt.
const MaxLength = 1 << 20

// maxRedraws bounds the draws a truncated normal makes before it clamps.
const maxRedraws = 1000

// Dist is a distribution of lengths in tokens, whole numbers ≥ 1.
type Dist struct {
	Kind  string  // DistFixed, DistUniform or DistNormal
	Value int     // fixed: the length
	Mean  float64 // normal: mean
	SD    float64 // normal: standard deviation
	// Min and Max bound uniform (both included, both required) and truncate
	// normal: a value outside [Min, Max] is drawn again. For normal, Min 0
	// means 1 and Max 0 means no upper bound.
	Min, Max int
}

// Check reports what is wrong with d, or nil.
func (d Dist) Check() error {
	inRange := func(what string, n int) error {
		if n < 1 || n > MaxLength {
			return fmt.Errorf("%s %d: want 1 to %d", what, n, MaxLength)
		}
		return nil
	}
	switch d.Kind {
	case DistFixed:
		return inRange("length", d.Value)
	case DistUniform:
		if err := errors.Join(inRange("min", d.Min), inRange("max", d.Max)); err != nil {
			return err
		}
		if d.Min > d.Max {
			return fmt.Errorf("min %d is above max %d", d.Min, d.Max)
		}
	case DistNormal:
		lo, hi := d.bounds()
		switch {
		case !(d.SD >= 0) || math.IsInf(d.SD, 0):
			return fmt.Errorf("sd %g: want a finite number ≥ 0", d.SD)
		case d.Min < 0 || d.Max < 0 || hi > MaxLength:
			return fmt.Errorf("min %d, max %d: want 1 to %d", d.Min, d.Max, MaxLength)
		case lo > hi:
			return fmt.Errorf("min %d is above max %d", lo, hi)
		case !(d.Mean >= float64(lo) && d.Mean <= float64(hi)):
			// A mean outside the bounds would make almost every draw a
			// redraw, and the result nothing like the mean asked for.
			return fmt.Errorf("mean %g: want it within [%d, %d]", d.Mean, lo, hi)
		}
	default:
		return fmt.Errorf("distribution %q: want %s, %s or %s", d.Kind, DistFixed, DistUniform, DistNormal)
	}
	return nil
}

// bounds are normal's effective truncation bounds.
func (d Dist) bounds() (lo, hi int) {
	lo, hi = max(d.Min, 1), d.Max
	if hi == 0 {
		hi = MaxLength
	}
	return lo, hi
}

// Draw returns one length from d. d must have passed Check.
func (d Dist) Draw(r *rand.Rand) int {
	switch d.Kind {
	case DistUniform:
		return d.Min + r.IntN(d.Max-d.Min+1)
	case DistNormal:
		lo, hi := d.bounds()
		for range maxRedraws {
			n := int(math.Round(d.Mean + d.SD*r.NormFloat64()))
			if n >= lo && n <= hi {
				return n
			}
		}
		return min(max(int(math.Round(d.Mean)), lo), hi)
	}
	return d.Value
}

// String is d's canonical text, which ParseDist reads back and the sweep
// fingerprint hashes: "512", "uniform(min=50,max=400)",
// "normal(mean=500,sd=100,min=1,max=2000)" (max left out when unbounded).
func (d Dist) String() string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch d.Kind {
	case DistUniform:
		return fmt.Sprintf("uniform(min=%d,max=%d)", d.Min, d.Max)
	case DistNormal:
		lo, _ := d.bounds()
		s := fmt.Sprintf("normal(mean=%s,sd=%s,min=%d", num(d.Mean), num(d.SD), lo)
		if d.Max > 0 {
			s += fmt.Sprintf(",max=%d", d.Max)
		}
		return s + ")"
	}
	return strconv.Itoa(d.Value)
}

// ParseDist reads a distribution in String's form; "fixed(N)" is also
// accepted for "N", and a normal's min and max may be left out.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		d := Dist{Kind: DistFixed, Value: n}
		return d, d.Check()
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("length %q: want N, uniform(min=A,max=B) or normal(mean=M,sd=S[,min=A][,max=B])", s)
	}
	d := Dist{Kind: s[:open]}
	args := s[open+1 : len(s)-1]
	if d.Kind == DistFixed {
		n, err := strconv.Atoi(strings.TrimSpace(args))
		if err != nil {
			return Dist{}, fmt.Errorf("length %q: want fixed(N)", s)
		}
		d.Value = n
		return d, d.Check()
	}
	keys := map[string][]string{DistUniform: {"min", "max"}, DistNormal: {"mean", "sd", "min", "max"}}[d.Kind]
	if keys == nil {
		return Dist{}, fmt.Errorf("length %q: distribution %q: want %s, %s or %s", s, d.Kind, DistFixed, DistUniform, DistNormal)
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || seen[k] || !slices.Contains(keys, k) {
			return Dist{}, fmt.Errorf("length %q: %q: want each of %s once, as key=value", s, kv, strings.Join(keys, ", "))
		}
		seen[k] = true
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return Dist{}, fmt.Errorf("length %q: %s: %q is not a number", s, k, v)
		}
		if k == "min" || k == "max" {
			if x != math.Trunc(x) || x < 0 || x > MaxLength {
				return Dist{}, fmt.Errorf("length %q: %s %q: want a whole number of tokens", s, k, v)
			}
		}
		switch k {
		case "min":
			d.Min = int(x)
		case "max":
			d.Max = int(x)
		case "mean":
			d.Mean = x
		case "sd":
			d.SD = x
		}
	}
	required := keys
	if d.Kind == DistNormal {
		required = keys[:2]
		d.Min = max(d.Min, 1) // as bounds reads it, so the text reads back equal
	}
	for _, k := range required {
		if !seen[k] {
			return Dist{}, fmt.Errorf("length %q: %s missing", s, k)
		}
	}
	return d, d.Check()
}
