package timeline

import "math"

// GaugeSeries is the first of names that the timeline carries, as one value
// per scrape within [start, end] (Unix ns): its series summed at each scrape
// (sum: requests spread over engine cores or ranks) or averaged (a fraction
// such as KV usage). Scrapes that carried none of its series are left out.
// name is "" when none of names is in the window.
func (tl *Timeline) GaugeSeries(names []string, sum bool, start, end int64) (name string, times []int64, vals []float64) {
	for _, n := range names {
		idx := tl.named(n)
		if len(idx) == 0 {
			continue
		}
		for k, t := range tl.Times {
			if t < start || t > end {
				continue
			}
			var tot float64
			c := 0
			for _, i := range idx {
				if v := tl.Values[i][k]; !math.IsNaN(v) {
					tot += v
					c++
				}
			}
			if c == 0 {
				continue
			}
			if !sum {
				tot /= float64(c)
			}
			times, vals = append(times, t), append(vals, tot)
		}
		if len(times) > 0 {
			return n, times, vals
		}
	}
	return "", nil, nil
}
