package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// plotTicks is about how many labelled ticks a value axis gets: enough to
// read a value off, few enough that the labels never touch at a phone's
// width.
const plotTicks = 5

// niceSteps are the steps an axis is ticked at, times a power of ten.
var niceSteps = []float64{1, 2, 2.5, 5, 10}

// numTicks ticks a value axis at a round step and labels each tick with
// the digits the step needs and no more: 250, 500, 750 (not 250.00); 0.95,
// 1.00, 1.05; integers only when the values are counts.
type numTicks struct {
	// integer keeps the step at 1 or more, for values that are counts.
	integer bool
	// step is the step fitAxis chose for the range; 0 chooses one from the
	// range asked for.
	step float64
}

var _ plot.Ticker = numTicks{}

// Ticks implements plot.Ticker.
func (t numTicks) Ticks(lo, hi float64) []plot.Tick {
	step := t.step
	if step <= 0 {
		step = niceStep(hi-lo, t.integer)
	}
	digits := stepDigits(step)
	var out []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		x := k * step
		if x == 0 {
			x = 0 // no "-0"
		}
		out = append(out, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', digits, 64)})
	}
	return out
}

// niceStep is the round step that cuts span into about plotTicks parts.
func niceStep(span float64, integer bool) float64 {
	if !(span > 0) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / plotTicks
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range niceSteps {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	if integer && step < 1 {
		return 1
	}
	if integer && step == 2.5 {
		return 2 // a count's step is a whole number
	}
	return step
}

// stepDigits is how many decimals tell the ticks step apart: 0 for 250, 2
// for 0.25, 1 for 0.5.
func stepDigits(step float64) int {
	for d := 0; d < 10; d++ {
		scaled := step * math.Pow(10, float64(d))
		if math.Abs(scaled-math.Round(scaled)) < 1e-6*scaled {
			return d
		}
	}
	return 10
}

// fitAxis ticks a with numTicks and widens its range to the ticks around
// [lo, hi], so that the axis starts and ends on a label; fromZero starts a
// quantity that cannot be negative (a throughput, a latency) at 0, so that
// the lines' heights compare.
func fitAxis(a *plot.Axis, lo, hi float64, fromZero, integer bool) {
	if fromZero {
		lo = 0
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		return // no data: gonum draws an empty frame
	}
	if hi <= lo {
		hi = lo + max(1, math.Abs(lo)*0.1)
	}
	step := niceStep(hi-lo, integer)
	a.Min = math.Floor(lo/step+1e-9) * step
	a.Max = math.Ceil(hi/step-1e-9) * step
	a.Tick.Marker = numTicks{integer: integer, step: step}
}
