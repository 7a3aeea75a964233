// Package selection picks, at each level of a campaign, the fastest of many
// configurations (a space of speculative-decoding steps × topk, say) with a
// guaranteed probability of correct selection, launching each configuration
// only as long as it can still win somewhere.
//
// The procedure is Kim & Nelson's fully sequential indifference-zone
// procedure KN (S.-H. Kim and B. L. Nelson, "A fully sequential procedure
// for indifference-zone selection in simulation", ACM Transactions on
// Modeling and Computer Simulation 11(3), 2001), run on launches in rounds:
// the round is KN's stage, its launches share the host's drift and the
// prompts (common random numbers), and KN works on the differences of two
// configurations within a stage, so both cancel. Three changes to KN, each
// derived or measured in docs/METHOD.md ("Selecting the best"):
//
//   - The first stage's variance is pooled over the configurations (the
//     residual of the configurations × rounds table), not estimated for each
//     pair: every launch of every configuration varies by the same launch
//     effect, and the pool's (k−1)(n0−1) degrees of freedom let the first
//     stage be two rounds where KN's pairwise variances need ten or more.
//     The constant h² is KN's, with those degrees of freedom in place of
//     n0 − 1.
//   - At each later look the variance is pooled again over the live
//     configurations' rounds so far (the update of Kim & Nelson's KN++,
//     "On the asymptotic validity of fully sequential selection procedures
//     for steady-state simulation", Operations Research 54(3), 2006), and
//     the allowance is the larger of the two: launches with heavy tails
//     make two rounds' variance too low too often.
//   - Each level is its own KN race over the same launches (a launch sweeps
//     every level); a configuration is launched while it is live at some
//     level that is not yet decided, and the guarantee is per level.
//
// A race may be capped at a maximum of rounds. The guarantee holds for a
// level that ends before the cap (one configuration left, or the allowance
// down to zero); at a level the cap cuts off, the live set still holds the
// best with the same probability (truncation only removes eliminations),
// and the selection is the best mean among it.
//
// The race's own figure of how far the selected leads is biased upward (it
// was selected for being ahead); the reported advantage and the envelope
// come from confirmation rounds run after the race, whose data the
// selection never saw.
package selection
