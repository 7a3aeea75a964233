package campaign

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRoundsKeys: rounds, min_effect and equivalence_margin are read, given
// their defaults when left out, and refused with file:line:col when wrong.
func TestRoundsKeys(t *testing.T) {
	for _, tc := range []struct {
		name                string
		files               memFiles
		rounds              int
		minEffect, margin   float64
		wantErrs, wantWarns []string
	}{
		{name: "defaults", files: goodFiles, rounds: DefaultRounds, minEffect: DefaultMinEffectPct, margin: DefaultEquivalenceMarginPct},
		{name: "set with percent signs", files: top("rounds: 3\nmin_effect: 4.5%\nequivalence_margin: 1%\n"),
			rounds: 3, minEffect: 4.5, margin: 1},
		{name: "bare numbers are percent", files: top("rounds: 1\nmin_effect: 3\nequivalence_margin: 2.5\n"),
			rounds: 1, minEffect: 3, margin: 2.5},
		{name: "space before the sign", files: top("min_effect: 3 %\n"), rounds: DefaultRounds, minEffect: 3,
			margin: DefaultEquivalenceMarginPct},
		{name: "no floor", files: top("min_effect: 0%\n"), rounds: DefaultRounds, minEffect: 0,
			margin: DefaultEquivalenceMarginPct},
		{name: "a bare fraction is refused", files: top("equivalence_margin: 0.02\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:21: equivalence_margin: 0.02 is ambiguous: write 2% for a fraction of 0.02, or 0.02% for 0.02 percent`}},
		{name: "a small percent with its sign", files: top("equivalence_margin: 0.5%\n"), rounds: DefaultRounds,
			minEffect: DefaultMinEffectPct, margin: 0.5},
		{name: "rounds zero", files: top("rounds: 0\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: rounds: must be at least 1, got 0`}},
		{name: "rounds not an integer", files: top("rounds: 2.5\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: rounds: want an integer, got "2.5"`}},
		{name: "rounds absurd", files: top("rounds: 100000\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: rounds: 100000 is more than 1000`}},
		{name: "bad percentages", files: top("min_effect: five\nequivalence_margin: 0%\n"),
			wantErrs: []string{
				`c/configs/camp.yaml:9:13: min_effect: "five" is not a percentage (want e.g. 2% or 2)`,
				`c/configs/camp.yaml:10:21: equivalence_margin: must be more than 0% (no two measurements are ever exactly equal)`,
			}},
		{name: "out of range", files: top("min_effect: -1%\nequivalence_margin: 100\n"),
			wantErrs: []string{
				`c/configs/camp.yaml:9:13: min_effect: -1% is outside 0%-100%`,
				`c/configs/camp.yaml:10:21: equivalence_margin: 100% is outside 0%-100%`,
			}},
		{name: "a list", files: top("min_effect: [1]\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:13: min_effect: want a percentage like 2%, got a list`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if c.Rounds != tc.rounds || c.MinEffectPct != tc.minEffect || c.EquivalenceMarginPct != tc.margin {
				t.Errorf("rounds %d, min_effect %g%%, equivalence_margin %g%%; want %d, %g%%, %g%%",
					c.Rounds, c.MinEffectPct, c.EquivalenceMarginPct, tc.rounds, tc.minEffect, tc.margin)
			}
			if !reflect.DeepEqual(c.Warnings, tc.wantWarns) {
				t.Errorf("warnings:\n got: %q\nwant: %q", c.Warnings, tc.wantWarns)
			}
		})
	}
}

// TestRoundsNotInFingerprint: two runs of one sweep with different rounds
// measure the same thing per launch and may be compared (diff) or
// extended (resume with more rounds).
func TestRoundsNotInFingerprint(t *testing.T) {
	a, _ := loadMem(t, goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + "rounds: 3\n"}))
	b, _ := loadMem(t, goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + "rounds: 5\nmin_effect: 1%\n"}))
	if a == nil || b == nil {
		t.Fatal("load failed")
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("rounds or min_effect changed the sweep fingerprint")
	}
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('A' + i))
	}
	return out
}

// TestLaunchOrderExamples pins the first rounds, so a change of design is
// a visible decision (a resumed run keeps the order it started with).
func TestLaunchOrderExamples(t *testing.T) {
	for _, tc := range []struct {
		n, rounds int
		want      string
	}{
		{1, 3, "A|A|A"},
		{2, 4, "AB|BA|AB|BA"},
		{3, 6, "ABC|CBA|BCA|ACB|CAB|BAC"},
		{4, 4, "ABCD|DCBA|BDAC|CADB"},
		{3, 7, "ABC|CBA|BCA|ACB|CAB|BAC|ABC"},
	} {
		var rows []string
		for _, r := range LaunchOrder(names(tc.n), tc.rounds) {
			rows = append(rows, strings.Join(r, ""))
		}
		if got := strings.Join(rows, "|"); got != tc.want {
			t.Errorf("n=%d rounds=%d: %s, want %s", tc.n, tc.rounds, got, tc.want)
		}
	}
}

// TestLaunchOrderBalance checks the properties the design is for, for 1 to
// 9 scenarios and 1 to 4 periods of rounds.
func TestLaunchOrderBalance(t *testing.T) {
	for n := 1; n <= 9; n++ {
		period := n
		if n%2 == 1 {
			period = 2 * n
		}
		for rounds := 1; rounds <= 4*period; rounds++ {
			order := LaunchOrder(names(n), rounds)
			if len(order) != rounds {
				t.Fatalf("n=%d: %d rounds, want %d", n, len(order), rounds)
			}
			posSum := map[string]int{}
			follows := map[[2]string]int{}
			for k, row := range order {
				// Every round launches every scenario once.
				if got := slices.Sorted(slices.Values(row)); !slices.Equal(got, names(n)) {
					t.Fatalf("n=%d round %d: %v is not each scenario once", n, k+1, row)
				}
				for i, s := range row {
					posSum[s] += i
					if i > 0 {
						follows[[2]string{row[i-1], s}]++
					}
				}
			}
			// Even rounds: the same mean position for all, so a linear
			// drift shifts every scenario alike.
			if rounds%2 == 0 {
				for s, sum := range posSum {
					if 2*sum != rounds*(n-1) {
						t.Errorf("n=%d rounds=%d: %s's positions sum to %d, want %d", n, rounds, s, sum, rounds*(n-1)/2)
					}
				}
			}
			// Whole periods: each ordered pair adjacent equally often
			// (first-order carryover balance).
			if rounds%period == 0 && n > 1 {
				want := rounds * (n - 1) / (n * (n - 1))
				for _, a := range names(n) {
					for _, b := range names(n) {
						if a != b && follows[[2]string{a, b}] != want {
							t.Errorf("n=%d rounds=%d: %s directly before %s %d times, want %d", n, rounds, a, b,
								follows[[2]string{a, b}], want)
						}
					}
				}
			}
		}
	}
}

// TestLaunchOrderPrefix: adding rounds keeps the rounds already run.
func TestLaunchOrderPrefix(t *testing.T) {
	for n := 1; n <= 6; n++ {
		long := LaunchOrder(names(n), 20)
		for r := range 20 {
			if got := LaunchOrder(names(n), r); !reflect.DeepEqual(got, long[:r]) {
				t.Fatalf("n=%d: %d rounds are not a prefix of 20: %v", n, r, got)
			}
		}
	}
}

func ExampleLaunchOrder() {
	for _, round := range LaunchOrder([]string{"base", "spec", "tuned"}, 4) {
		fmt.Println(strings.Join(round, " "))
	}
	// Output:
	// base spec tuned
	// tuned spec base
	// spec tuned base
	// base tuned spec
}

// TestSequentialRounds: `rounds: {min, max}` makes the rounds sequential;
// a number, or min = max, is the fixed design; wrong shapes are refused at
// their file:line:col.
func TestSequentialRounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      memFiles
		min, max   int
		sequential bool
		wantErrs   []string
	}{
		{name: "sequential", files: top("rounds: {min: 3, max: 12}\n"), min: 3, max: 12, sequential: true},
		{name: "block form", files: top("rounds:\n  min: 2\n  max: 4\n"), min: 2, max: 4, sequential: true},
		{name: "min = max is fixed", files: top("rounds: {min: 5, max: 5}\n"), max: 5},
		{name: "a number is fixed", files: top("rounds: 4\n"), max: 4},
		{name: "min too small", files: top("rounds: {min: 1, max: 6}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:15: rounds.min: must be at least 2, got 1`}},
		{name: "max below min", files: top("rounds: {min: 6, max: 4}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:23: rounds.max: 4 is less than rounds.min 6`}},
		{name: "max absurd", files: top("rounds: {min: 3, max: 5000}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:23: rounds.max: 5000 is more than 1000`}},
		{name: "half given", files: top("rounds: {min: 3}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:9: rounds: give both min and max (or one number for a fixed design)`}},
		{name: "unknown key", files: top("rounds: {min: 3, max: 6, most: 9}\n"),
			wantErrs: []string{`c/configs/camp.yaml:9:26: rounds: unknown key "most" (known: max, min)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if c.MinRounds != tc.min || c.Rounds != tc.max || c.Sequential() != tc.sequential {
				t.Errorf("min %d max %d sequential %v; want %d %d %v", c.MinRounds, c.Rounds, c.Sequential(), tc.min, tc.max, tc.sequential)
			}
		})
	}
}

// TestOrderStill: once a variant stops, the launches left keep the rows of
// the design the campaign started with, in its order: the full row with
// the stopped one left out, not a new design of the fewer scenarios (whose
// row for the same round would put them in another order).
func TestOrderStill(t *testing.T) {
	all := []string{"base", "a", "b", "c"}
	still := []string{"base", "a", "c"}
	differs := false
	for round := 1; round <= 8; round++ {
		got := OrderStill(all, still, round)
		var want []string
		for _, n := range LaunchOrder(all, round)[round-1] {
			if n != "b" {
				want = append(want, n)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", round, got, want)
		}
		differs = differs || !slices.Equal(got, LaunchOrder(still, round)[round-1])
	}
	if !differs {
		t.Error("a design of the three left gives the same rows: the test shows nothing")
	}
}
