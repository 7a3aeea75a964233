// Package plan chooses how to spend a campaign's remaining time: how many
// requests each level takes in the next rounds, how many rounds that needs
// to bring the smallest detectable difference down to the equivalence
// margin, and what a budget or a deadline buys.
//
// It is arithmetic on what the rounds so far measured (or, before any,
// on stated assumptions): the fixed cost of a launch, the sweep seconds a
// request costs at each level, and how one round's variance splits into a
// part from the launch and a part from sampling within it, which shrinks
// as 1/n with the requests n. docs/METHOD.md ("Planning the night") derives
// the optimum. Nothing here reads files or prints.
package plan
