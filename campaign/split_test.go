package campaign

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSplitLayoutKeepsPlain: one host, no more hosts than rounds, or a
// split that does not shorten the night keeps LaunchOrder's layout.
func TestSplitLayoutKeepsPlain(t *testing.T) {
	for _, tc := range []struct{ n, rounds, hosts int }{
		{n: 6, rounds: 3, hosts: 1},
		{n: 6, rounds: 3, hosts: 3},
		{n: 6, rounds: 6, hosts: 4},
		{n: 2, rounds: 3, hosts: 16}, // one variant: nothing to split
		{n: 3, rounds: 4, hosts: 5},  // two parts would make two waves
	} {
		t.Run(fmt.Sprintf("%dx%d on %d", tc.n, tc.rounds, tc.hosts), func(t *testing.T) {
			got := SplitLayout(names(tc.n), "A", tc.rounds, tc.hosts)
			want := Layout{Order: LaunchOrder(names(tc.n), tc.rounds)}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want the plain layout %+v", got, want)
			}
		})
	}
}

// TestSplitLayoutExamples: the parts of small splits, written out.
func TestSplitLayoutExamples(t *testing.T) {
	for _, tc := range []struct {
		n, rounds, hosts int
		baseline         string
		want             string
		reps             []int
	}{
		// Two parts per replicate: B and D with A, C and E with A.
		{n: 5, rounds: 2, hosts: 4, baseline: "A", want: "ABD|ACE|DBA|ECA", reps: []int{1, 1, 2, 2}},
		// The baseline keeps its place in the campaign order.
		{n: 4, rounds: 1, hosts: 3, baseline: "C", want: "AC|BC|CD", reps: []int{1, 1, 1}},
	} {
		got := SplitLayout(names(tc.n), tc.baseline, tc.rounds, tc.hosts)
		var rows []string
		for _, r := range got.Order {
			rows = append(rows, strings.Join(r, ""))
		}
		if s := strings.Join(rows, "|"); s != tc.want || !slices.Equal(got.Replicates, tc.reps) {
			t.Errorf("%d×%d on %d: %s %v, want %s %v", tc.n, tc.rounds, tc.hosts, s, got.Replicates, tc.want, tc.reps)
		}
	}
}

// TestSplitLayoutProperties: every variant once per replicate, the
// baseline in every part, each part a counterbalanced row of its own
// scenarios, replicate after replicate, for shapes with idle hosts.
func TestSplitLayoutProperties(t *testing.T) {
	for _, tc := range []struct{ n, rounds, hosts int }{
		{100, 3, 16}, {30, 3, 16}, {10, 3, 8}, {6, 3, 16}, {9, 2, 5}, {4, 1, 8},
	} {
		t.Run(fmt.Sprintf("%dx%d on %d", tc.n, tc.rounds, tc.hosts), func(t *testing.T) {
			all := names(tc.n)
			l := SplitLayout(all, "A", tc.rounds, tc.hosts)
			if len(l.Replicates) != len(l.Order) || len(l.Order) <= tc.rounds {
				t.Fatalf("not split: %d rounds, replicates %v", len(l.Order), l.Replicates)
			}
			seen := map[int]map[string]int{}
			for k, row := range l.Order {
				r := l.Replicates[k]
				if k > 0 && r < l.Replicates[k-1] {
					t.Errorf("round %d is of replicate %d after replicate %d", k+1, r, l.Replicates[k-1])
				}
				if !slices.Contains(row, "A") || len(row) < 2 {
					t.Errorf("round %d %v: want the baseline and a variant", k+1, row)
				}
				part := slices.Sorted(slices.Values(row))
				if want := LaunchOrder(part, r)[r-1]; !slices.Equal(row, want) {
					t.Errorf("round %d %v, want its scenarios' row %d %v", k+1, row, r, want)
				}
				if seen[r] == nil {
					seen[r] = map[string]int{}
				}
				for _, n := range row {
					seen[r][n]++
				}
			}
			for r := 1; r <= tc.rounds; r++ {
				for _, n := range all[1:] {
					if seen[r][n] != 1 {
						t.Errorf("replicate %d launches %s %d times, want once", r, n, seen[r][n])
					}
				}
				if got, want := seen[r]["A"], l.Parts(r); got != want {
					t.Errorf("replicate %d launches the baseline %d times, want once per part (%d)", r, got, want)
				}
			}
		})
	}
}

// TestLayoutNight: the launches a layout holds and the night in launches
// one host runs in a row, split and whole.
func TestLayoutNight(t *testing.T) {
	for _, tc := range []struct {
		n, rounds, hosts      int
		launches, serial, per int
	}{
		{n: 100, rounds: 3, hosts: 16, launches: 312, serial: 21, per: 5},
		{n: 100, rounds: 3, hosts: 1, launches: 300, serial: 300, per: 1},
		{n: 4, rounds: 2, hosts: 6, launches: 12, serial: 2, per: 3},
		{n: 6, rounds: 7, hosts: 3, launches: 42, serial: 18, per: 1},
	} {
		l := SplitLayout(names(tc.n), "A", tc.rounds, tc.hosts)
		if got := [3]int{l.Launches(), l.Serial(tc.hosts), l.Parts(1)}; got != [3]int{tc.launches, tc.serial, tc.per} {
			t.Errorf("%d×%d on %d: launches, serial, parts %v, want %v", tc.n, tc.rounds, tc.hosts, got, [3]int{tc.launches, tc.serial, tc.per})
		}
	}
}
