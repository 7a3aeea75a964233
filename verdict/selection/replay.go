package selection

// Replay is the race a campaign ran, from its records: rounds in order,
// fed to a Racer until the race ends, and the rounds after that its
// confirmation rounds. A campaign does not say which of its rounds
// confirmed; the race does, since it ends at the same look on the same
// figures every time it is replayed.
func Replay(configs, levels []string, rounds []Round, o Options) (*Result, error) {
	r, err := NewRacer(configs, levels, o)
	if err != nil {
		return nil, err
	}
	k := 0
	for ; k < len(rounds) && !r.Done(); k++ {
		if err := r.Add(rounds[k]); err != nil {
			return nil, err
		}
	}
	return r.Result(rounds[k:])
}
