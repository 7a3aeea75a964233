package selection

import (
	"math"
	"slices"
)

// Replay is the race a campaign ran, from its records: rounds in order,
// fed to a Racer until the race ends, and the rounds after that its
// confirmation rounds. A campaign does not say which of its rounds
// confirmed; the race does, since it ends at the same look on the same
// figures every time it is replayed.
//
// Failed launches (a nil row, or a NaN figure) are replayed too: a
// configuration with no figure in a round of the first stage is left out
// of the race from the start (the first stage's variance needs every configuration's every
// round, and before its end every configuration runs whatever the looks
// say, so the looks that chose launches are replayed alike), and one with
// no figure in a later round it was launched for is withdrawn before it.
func Replay(configs, levels []string, rounds []Round, o Options) (res *Result, leftOut []string, err error) {
	first := o.FirstStage
	if first == 0 {
		first = DefaultFirstStage(len(configs))
	}
	rounds = slices.Clone(rounds) // the left out are cut from the copy
	var keep []int
	for i := range configs {
		ok := true
		for r := 0; r < min(first, len(rounds)); r++ {
			ok = ok && complete(rounds[r][i])
		}
		if ok {
			keep = append(keep, i)
		} else {
			leftOut = append(leftOut, configs[i])
		}
	}
	if len(keep) < len(configs) {
		var kept []string
		for _, i := range keep {
			kept = append(kept, configs[i])
		}
		for r, round := range rounds {
			sub := make(Round, len(keep))
			for j, i := range keep {
				sub[j] = round[i]
			}
			rounds[r] = sub
		}
		configs = kept
	}
	race, err := NewRacer(configs, levels, o)
	if err != nil {
		return nil, leftOut, err
	}
	k := 0
	for ; k < len(rounds) && !race.Done(); k++ {
		for _, name := range race.Next() {
			if i := slices.Index(configs, name); !complete(rounds[k][i]) {
				if err := race.Withdraw(name); err != nil {
					return nil, leftOut, err
				}
			}
		}
		if race.Done() {
			break
		}
		if err := race.Add(rounds[k]); err != nil {
			return nil, leftOut, err
		}
	}
	// A confirmation round in which a launch the confirmation needs failed
	// confirms nothing: it is left out, as the race leaves out a round it
	// cannot rank.
	var confirm []Round
	if race.Done() {
		pre, err := race.Result(nil)
		if err != nil {
			return nil, leftOut, err
		}
		for _, round := range rounds[k:] {
			ok := true
			for _, name := range pre.Confirm {
				ok = ok && complete(round[slices.Index(configs, name)])
			}
			if ok {
				confirm = append(confirm, round)
			}
		}
	}
	res, err = race.Result(confirm)
	if err != nil {
		return nil, leftOut, err
	}
	return res, leftOut, nil
}

// complete reports whether a launch has a figure at every level.
func complete(row []float64) bool {
	if row == nil {
		return false
	}
	for _, y := range row {
		if math.IsNaN(y) {
			return false
		}
	}
	return true
}
