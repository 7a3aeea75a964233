package measure

// ArrivalFractions is how many equal shares of a stream's content the
// record's arrival times mark: Record.ArrivalNs holds the times at which
// 1/ArrivalFractions, 2/ArrivalFractions, … of it had arrived.
const ArrivalFractions = 8

// arrivalPoints bounds the points an ArrivalRecorder holds while a stream
// runs; more points place the fractions more exactly (to within
// 2/arrivalPoints of the content at worst).
const arrivalPoints = 32

// ArrivalRecorder follows, in bounded memory and a few comparisons per
// chunk, how a stream's content arrived over time, so that its tokens can be
// spread over the stream by their real arrival rather than evenly. It keeps
// points (content so far, time) spaced by a step of content that doubles
// whenever the points run out. The zero value is ready to use.
type ArrivalRecorder struct {
	n     int   // points held
	step  int64 // content between points; 0 until the first chunk
	next  int64 // content at which the next point is taken
	cum   int64 // content so far
	last  int64 // time of the latest arrival
	units [arrivalPoints]int64
	times [arrivalPoints]int64
}

// Add records that units more of content (bytes of text, or tokens where the
// caller counts them) arrived at ns, Unix nanoseconds.
func (a *ArrivalRecorder) Add(units int, ns int64) {
	if units <= 0 {
		return
	}
	a.cum += int64(units)
	a.last = ns
	if a.step == 0 {
		a.step = 1
	}
	if a.cum < a.next {
		return // between points; Times adds the latest arrival as the last
	}
	if a.n == arrivalPoints {
		// Keep every other point and double the step: memory stays
		// bounded, the spacing stays even. The first point, the first
		// chunk, stays: it may carry much of the content.
		k := 1
		for i := 2; i < a.n; i += 2 {
			a.units[k], a.times[k] = a.units[i], a.times[i]
			k++
		}
		a.n = k
		a.step *= 2
	}
	a.units[a.n], a.times[a.n] = a.cum, ns
	a.n++
	a.next = (a.cum/a.step + 1) * a.step
}

// Times returns, in ns after first (the first content's arrival), the times
// at which k/ArrivalFractions of the content had arrived, k = 1 …
// ArrivalFractions−1, interpolated between the recorded points; nil when too
// little arrived to say (fewer than two arrivals).
func (a *ArrivalRecorder) Times(first int64) []int64 {
	n := a.n
	units, times := a.units[:], a.times[:]
	if n > 0 && units[n-1] < a.cum {
		// The latest arrival fell between points: it is the last point.
		var u [arrivalPoints + 1]int64
		var t [arrivalPoints + 1]int64
		copy(u[:], units[:n])
		copy(t[:], times[:n])
		u[n], t[n] = a.cum, a.last
		units, times = u[:], t[:]
		n++
	}
	if n < 2 {
		return nil
	}
	out := make([]int64, ArrivalFractions-1)
	i := 0
	for k := 1; k < ArrivalFractions; k++ {
		target := float64(a.cum) * float64(k) / ArrivalFractions
		for i < n-1 && float64(units[i]) < target {
			i++
		}
		t := times[i]
		if i > 0 && float64(units[i-1]) < target {
			u0, u1 := float64(units[i-1]), float64(units[i])
			t0, t1 := times[i-1], times[i]
			t = t0 + int64(float64(t1-t0)*(target-u0)/(u1-u0))
		}
		out[k-1] = max(0, t-first)
	}
	return out
}
