// Package rule is the statistics of bakeoff's decision, on numbers alone:
// an estimated log ratio and its tests (Diff), the launch-to-launch variance
// of a levels × rounds table pooled over the levels with its effective
// degrees of freedom (PooledVar, LevelVar), the widening for rounds that a
// drift correlates (SerialInflation, Diff.Widened), the corrections for a
// family of tests (Adjust), Fisher's exact test, and the group-sequential
// design: looks, alpha spending and the boundaries and ties they give
// (Plan). It knows nothing of scenarios, records or reports: package
// verdict builds the tables and families from a run and applies the rule to
// them. docs/METHOD.md derives each piece and measures its error rates.
package rule
