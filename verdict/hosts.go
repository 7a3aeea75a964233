package verdict

import (
	"maps"
	"math"
	"slices"
)

// Hosts as blocks. A fleet runs each round whole on one host, so the two
// launches a comparison pairs (same round) ran on the same host: a host's
// own speed multiplies both and cancels in their log ratio, whatever the
// hosts' speeds and however unevenly the rounds fell on them. What is left
// of the hosts is that rounds on a faster host are not more alike than
// rounds on a slower one, which the launch-to-launch variance already
// measures. A round whose launches ran on different hosts (results from a
// scheduler that placed launches rather than rounds) would count the two
// hosts' speed difference as a difference between the scenarios, so it is
// left out of that pair's comparison and a note says so. Launches whose
// host the results do not name are paired as before.

// HostSpeed is one host's speed in a run that used several.
type HostSpeed struct {
	Host string `json:"host"`
	// Rounds are the rounds the baseline ran on the host.
	Rounds []int `json:"rounds"`
	// RelativePct is the baseline's throughput on this host against its
	// mean over the whole fleet, in percent (+3 is 3% faster): the geometric
	// mean over levels of the host's mean log throughput less the fleet's.
	RelativePct float64 `json:"relative_pct"`
}

// MixedHostRounds is a pair of scenarios with rounds whose two launches ran
// on different hosts.
type MixedHostRounds struct {
	// A and B are the two scenarios, B compared against A.
	A string `json:"a"`
	B string `json:"b"`
	// Rounds are the rounds left out of the pair's comparison.
	Rounds []int `json:"rounds"`
	// Left is how many rounds the comparison still has.
	Left int `json:"left"`
}

// sameHostRounds returns copies of the levels of two scenarios without the
// launches of rounds where the two ran on different (named) hosts, those
// rounds, and how many rounds both still have a launch in. A level left with
// one launch takes that launch's samples; a level left with none is not
// measured for this comparison.
func sameHostRounds(a, b []Level) (la, lb []Level, mixed []int, left int) {
	hosts := func(ls []Level) map[int]string {
		m := map[int]string{}
		for _, l := range ls {
			for _, ll := range l.Launches {
				if ll.Host != "" {
					m[ll.Round] = ll.Host
				}
			}
		}
		return m
	}
	ha, hb := hosts(a), hosts(b)
	drop := map[int]bool{}
	for r, h := range ha {
		if o, ok := hb[r]; ok && o != h {
			drop[r] = true
		}
	}
	if len(drop) == 0 {
		return a, b, nil, 0
	}
	keep := func(ls []Level) []Level {
		out := slices.Clone(ls)
		for i := range out {
			l := &out[i]
			l.Launches = slices.DeleteFunc(slices.Clone(l.Launches), func(ll LaunchLevel) bool { return drop[ll.Round] })
			if len(l.Launches) == 1 {
				l.Samples = l.Launches[0].Samples
			}
		}
		return out
	}
	mixed = slices.Sorted(maps.Keys(drop))
	la, lb = keep(a), keep(b)
	ra, rb := roundIndex(la), roundIndex(lb)
	for r := range ra {
		if _, ok := rb[r]; ok {
			left++
		}
	}
	return la, lb, mixed, left
}

// hostSpeeds is each host's speed from the baseline's launches, when they
// ran on more than one host; nil otherwise.
func hostSpeeds(v *Verdict) []HostSpeed {
	i := slices.IndexFunc(v.Scenarios, func(s Scenario) bool { return s.Name == v.Baseline })
	if i < 0 || v.Scenarios[i].Failed() {
		return nil
	}
	base := v.Scenarios[i]
	rounds := map[string]map[int]bool{}
	for _, l := range base.Levels {
		for _, ll := range l.Launches {
			if ll.Host != "" && ll.Throughput > 0 {
				if rounds[ll.Host] == nil {
					rounds[ll.Host] = map[int]bool{}
				}
				rounds[ll.Host][ll.Round] = true
			}
		}
	}
	if len(rounds) < 2 {
		return nil
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, l := range base.Levels {
		var fleet float64
		perHost := map[string][]float64{}
		k := 0
		for _, ll := range l.Launches {
			if ll.Host != "" && ll.Throughput > 0 {
				x := math.Log(ll.Throughput)
				fleet += x
				k++
				perHost[ll.Host] = append(perHost[ll.Host], x)
			}
		}
		if k == 0 {
			continue
		}
		fleet /= float64(k)
		for h, xs := range perHost {
			var m float64
			for _, x := range xs {
				m += x
			}
			sum[h] += m/float64(len(xs)) - fleet
			n[h]++
		}
	}
	var out []HostSpeed
	for _, h := range slices.Sorted(maps.Keys(rounds)) {
		hs := HostSpeed{Host: h, Rounds: slices.Sorted(maps.Keys(rounds[h]))}
		if n[h] > 0 {
			hs.RelativePct = pctOf(sum[h] / float64(n[h]))
		}
		out = append(out, hs)
	}
	return out
}
