package campaign

import "slices"

// LaunchOrder is the order in which the scenarios are launched in each of
// rounds rounds: one list of names per round, every name once per round.
//
// The rounds follow a Williams design interleaved with its mirror image:
// round 1 is the campaign order, round 2 the same reversed, round 3 the
// next row of the design, round 4 that reversed, and so on, with a period of
// n rounds for an even number n of scenarios and 2n for an odd one (2: A B,
// B A; 3: A B C, C B A, B C A, A C B, C A B, B A C; 4: A B C D, D C B A,
// B D A C, C A D B). This gives:
//
//   - After every even number of rounds, each scenario's mean position is
//     the same, (n-1)/2: a drift that is linear in time (the host warming,
//     a clock settling) shifts every scenario alike instead of favouring
//     the one launched first.
//   - After every period, each scenario directly follows each other
//     scenario equally often (first-order carryover balance): whatever one
//     launch leaves behind for the next (a warm GPU, a page cache) is spread
//     evenly, and every variant is launched next to the baseline.
//
// The order of round k depends on k and the names only, so adding rounds to
// a run later keeps the rounds already run.
func LaunchOrder(names []string, rounds int) [][]string {
	out := make([][]string, 0, max(rounds, 0))
	for k := range max(rounds, 0) {
		row := williamsRow(len(names), k)
		round := make([]string, len(row))
		for i, j := range row {
			round[i] = names[j]
		}
		out = append(out, round)
	}
	return out
}

// OrderStill is round's row (1-based) of LaunchOrder over all, with the
// scenarios not in still left out, the others in the order the row gives
// them. A sequential campaign stops variants as they are decided; the
// launches left keep the one design the campaign started with, so that
// the rounds run before and after a stop counterbalance together. A design
// of the fewer scenarios, indexed by the same round, would be another
// square whose rows the earlier rounds never belonged to.
func OrderStill(all, still []string, round int) []string {
	var out []string
	for _, name := range LaunchOrder(all, round)[round-1] {
		if slices.Contains(still, name) {
			out = append(out, name)
		}
	}
	return out
}

// Order is LaunchOrder of the campaign's scenarios over its rounds.
func (c *Campaign) Order() [][]string {
	names := make([]string, len(c.Scenarios))
	for i, s := range c.Scenarios {
		names[i] = s.Name
	}
	return LaunchOrder(names, max(c.Rounds, 1))
}

// williamsRow is round k (0-based) of the interleaved design for n
// scenarios, as indices into the campaign order.
//
// The classic Williams square's row r is w[j]+r (mod n) with w = 0, 1,
// n-1, 2, n-2, …: its consecutive differences 1, -2, 3, -4, … are distinct
// mod n, so for even n every ordered pair is adjacent exactly once in the n
// rows; for odd n the rows and their mirror images together make every
// ordered pair adjacent exactly twice. Round 2r is row r, round 2r+1 its
// mirror image. For even n the mirror image of row r is row r+n/2, so the
// first n rounds are the square's n rows; for odd n the 2n rounds are both
// squares. Relabelling the square so
// that its first row reads 0, 1, …, n-1 keeps every property and makes
// round 1 the campaign order.
func williamsRow(n, k int) []int {
	if n == 0 {
		return nil
	}
	w := make([]int, n) // the first row: 0, 1, n-1, 2, n-2, …
	for j := 1; j < n; j++ {
		if j%2 == 1 {
			w[j] = (j + 1) / 2
		} else {
			w[j] = n - j/2
		}
	}
	label := make([]int, n) // label[w[j]] = j, so row 0 reads 0, 1, …, n-1
	for j, x := range w {
		label[x] = j
	}
	if n%2 == 0 {
		k %= n
	} else {
		k %= 2 * n
	}
	r := k / 2
	row := make([]int, n)
	for j := range n {
		row[j] = label[(w[j]+r)%n]
	}
	if k%2 == 1 {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			row[i], row[j] = row[j], row[i]
		}
	}
	return row
}
