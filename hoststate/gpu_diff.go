package hoststate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SawReasons are the clock event reasons other than idle each of the
// launch's GPUs saw, by index: active at either reading, or counted by the
// driver between them.
func (l *Launch) SawReasons() map[int]Reasons {
	if l == nil {
		return nil
	}
	out := map[int]Reasons{}
	for _, i := range l.gpuIndices() {
		before, after := l.Before.gpu(i), l.After.gpu(i)
		r := (activeReasons(before) | activeReasons(after)) &^ ReasonGPUIdle
		if before != nil && after != nil && before.Counters != nil && after.Counters != nil {
			b, a := before.Counters.byReason(), after.Counters.byReason()
			for k := range b {
				if a[k].us > b[k].us {
					r |= b[k].bit
				}
			}
		}
		out[i] = r
	}
	return out
}

// gpuRun is what one run's launches saw of their GPUs.
type gpuRun struct {
	// launches counts, per GPU index, the launches that read it; saw, per
	// index and reason, those in which it saw the reason.
	launches map[int]int
	saw      map[int]map[Reasons]int
	// ecc is the most uncorrected ECC errors a reading counted, per index.
	ecc map[int]int64
	// The settings every reading had, each value once, as written.
	limit, maxSM, maxMem, persistence map[string]bool
}

func gpuRunOf(ls []*Launch) gpuRun {
	r := gpuRun{launches: map[int]int{}, saw: map[int]map[Reasons]int{}, ecc: map[int]int64{},
		limit: map[string]bool{}, maxSM: map[string]bool{}, maxMem: map[string]bool{}, persistence: map[string]bool{}}
	for _, l := range ls {
		if l == nil {
			continue
		}
		for i, reasons := range l.SawReasons() {
			r.launches[i]++
			if r.saw[i] == nil {
				r.saw[i] = map[Reasons]int{}
			}
			for _, b := range reasons.Bits() {
				r.saw[i][b]++
			}
		}
		for _, s := range []*State{l.Before, l.After} {
			if s != nil {
				r.addSettings(s.GPUs)
			}
		}
	}
	return r
}

func (r gpuRun) addSettings(gpus []GPU) {
	for _, g := range gpus {
		if g.PowerLimitW != nil {
			r.limit[fmt.Sprintf("%.0f W", *g.PowerLimitW)] = true
		}
		if g.MaxSMMHz != nil {
			r.maxSM[fmt.Sprintf("%d MHz", *g.MaxSMMHz)] = true
		}
		if g.MaxMemMHz != nil {
			r.maxMem[fmt.Sprintf("%d MHz", *g.MaxMemMHz)] = true
		}
		if g.Persistence != nil {
			r.persistence[map[bool]string{true: "on", false: "off"}[*g.Persistence]] = true
		}
		if g.ECCUncorrected != nil {
			r.ecc[g.Index] = max(r.ecc[g.Index], *g.ECCUncorrected)
		}
	}
}

// GPUDiffers says, in words, how two runs' GPUs differed, one sentence a
// difference: the settings they ran under (the enforced power limit, the
// max SM and memory clocks, persistence mode), a clock event reason other
// than idle that a GPU saw in one run and never in the other ("the new
// run's GPU 3 hit HW thermal slowdown in 4 of 12 launches; the old run
// never did"), and uncorrected ECC errors in one run only. A GPU is
// compared only where both runs read it; nothing is said when either run
// read none. The driver is not here: the run's host facts hold it.
func GPUDiffers(old, new []*Launch) []string {
	o, n := gpuRunOf(old), gpuRunOf(new)
	if len(o.launches) == 0 || len(n.launches) == 0 {
		return nil
	}
	var out []string
	if s := settingsDiffer(o, n); s != "" {
		out = append(out, s)
	}
	out = append(out, reasonsDiffer(o, n)...)
	return append(out, eccDiffers(o, n)...)
}

// settingsDiffer is the sentence naming the settings whose values the
// two runs' readings had differently, or "".
func settingsDiffer(o, n gpuRun) string {
	var parts []string
	for _, s := range []struct {
		what     string
		old, new map[string]bool
	}{
		{"power limit", o.limit, n.limit},
		{"max SM clock", o.maxSM, n.maxSM},
		{"max memory clock", o.maxMem, n.maxMem},
		{"persistence mode", o.persistence, n.persistence},
	} {
		a, b := setWords(s.old), setWords(s.new)
		if a != "" && b != "" && a != b {
			parts = append(parts, fmt.Sprintf("%s %s → %s", s.what, a, b))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "the runs' GPUs differ: " + strings.Join(parts, "; ")
}

// setWords are a setting's values, sorted, "/" between.
func setWords(m map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), "/")
}

// reasonsDiffer are the sentences for each reason some GPU saw in one run
// and never in the other, the GPUs that saw it in as many launches named
// together.
func reasonsDiffer(o, n gpuRun) []string {
	type key struct {
		run        string
		bit        Reasons
		saw, of    int
		neverWhich string
	}
	var keys []key
	gpus := map[key][]int{}
	for _, i := range slices.Sorted(maps.Keys(o.launches)) {
		if n.launches[i] == 0 {
			continue
		}
		for _, side := range []struct {
			run, other string
			a, b       gpuRun
		}{{"old", "new", o, n}, {"new", "old", n, o}} {
			for _, b := range slices.Sorted(maps.Keys(side.a.saw[i])) {
				if side.b.saw[i][b] > 0 {
					continue
				}
				k := key{side.run, b, side.a.saw[i][b], side.a.launches[i], side.other}
				if gpus[k] == nil {
					keys = append(keys, k)
				}
				gpus[k] = append(gpus[k], i)
			}
		}
	}
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("the %s run's %s hit %s in %d of %d launches; the %s run never did",
			k.run, gpuWords(gpus[k]), k.bit.word(), k.saw, k.of, k.neverWhich))
	}
	return out
}

// eccDiffers are the sentences for GPUs that counted uncorrected ECC
// errors in one run and none in the other.
func eccDiffers(o, n gpuRun) []string {
	var out []string
	for _, i := range slices.Sorted(maps.Keys(o.ecc)) {
		b, ok := n.ecc[i]
		if !ok {
			continue
		}
		a := o.ecc[i]
		switch {
		case a == 0 && b > 0:
			out = append(out, fmt.Sprintf("the new run's GPU %d counted %d uncorrected ECC errors; the old run none", i, b))
		case b == 0 && a > 0:
			out = append(out, fmt.Sprintf("the old run's GPU %d counted %d uncorrected ECC errors; the new run none", i, a))
		}
	}
	return out
}

// gpuWords names GPUs by index: "GPU 3", "GPUs 0, 1 and 5".
func gpuWords(is []int) string {
	if len(is) == 1 {
		return fmt.Sprintf("GPU %d", is[0])
	}
	s := make([]string, len(is))
	for k, i := range is {
		s[k] = fmt.Sprint(i)
	}
	return "GPUs " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
