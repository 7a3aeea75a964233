package plan

import (
	"strconv"
	"strings"
	"testing"
)

// TestChange: a plan says what moved it away from the one before: the
// noise at the level that now sets the plan, a launch's time, the
// launches a round, and what that did to the rounds; figures that moved
// less than a tenth are not named.
func TestChange(t *testing.T) {
	then := threeLevels(0.014, 0.014, 3, 12)
	noisier := threeLevels(0.014, 0.014, 3, 12)
	noisier.Noise[2].Launch = 0.025 * 0.025 // C=70's launches vary more than assumed
	slower := threeLevels(0.014, 0.014, 3, 12)
	slower.Launch *= 1.5
	fewer := threeLevels(0.014, 0.014, 3, 12)
	fewer.Scenarios = 1
	same := threeLevels(0.0141, 0.0139, 3, 12)
	for _, tc := range []struct {
		name string
		now  Inputs
		want []string
		not  []string
	}{
		{"noise higher at one level", noisier,
			[]string{"noise at C=70 higher than assumed (", "% a round, not 1.5%)", " rounds in all, not "}, []string{"a launch"}},
		{"launches longer", slower, []string{"a launch longer than assumed (", "the same "}, []string{"noise"}},
		{"fewer launches a round", fewer, []string{"1 launch a round, not 2"}, []string{"noise", "a launch "}},
		{"nothing moved a tenth", same, []string{"nothing measured moved by a tenth or more: the same "}, []string{"noise at"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			was, is := NextScaled(then), NextScaled(tc.now)
			got := Change(then, tc.now, was, is, "assumed", "assumed")
			t.Log(got)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("%q says %q", got, w)
				}
			}
		})
	}
	// More noise needs more rounds, and the line says how many.
	was, is := NextScaled(then), NextScaled(noisier)
	if is.Rounds <= was.Rounds {
		t.Fatalf("more noise, no more rounds: %s against %s", is, was)
	}
	if got := Change(then, noisier, was, is, "assumed", "planned"); !strings.Contains(got, ": "+strconv.Itoa(is.Rounds)+" rounds in all, not "+strconv.Itoa(was.Rounds)) {
		t.Errorf("%q does not give the rounds %d and %d", got, is.Rounds, was.Rounds)
	}
}
