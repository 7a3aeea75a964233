package placement

import "fmt"

// A campaign with a deployment over N nodes takes its hosts N at a time
// (the orchestrator makes the groups: orchestrator/deployment_hosts.go), so
// a fleet or an allocation of H hosts runs H/N rounds at once, and hosts
// beyond a multiple of N run nothing. A fleet or allocation smaller than N
// is refused when the campaign is loaded.

// groupsWord says what H hosts taken per at a time make, for a plan's
// words: "2 groups of 2", "1 group of 2, 1 host left over".
func groupsWord(hosts, per int) string {
	n := hosts / per
	s := fmt.Sprintf("%d group", n)
	if n != 1 {
		s += "s"
	}
	s += fmt.Sprintf(" of %d: a launch spans %d nodes", per, per)
	if left := hosts % per; left > 0 {
		s += fmt.Sprintf("; %d left over", left)
	}
	return s
}

// DryNodeName names node k of a dry run's launch over several nodes, whose
// node 0 is shown: SHOWN.nodeK.
func DryNodeName(shown string, k int) string { return fmt.Sprintf("%s.node%d", shown, k) }

// sharing is a provider whose hosts each run several launches side by
// side (launches_per_host): its plan runs that many more at once, and says
// so where it says where the campaign runs.
type sharing struct {
	Provider
	per int
}

// Plan is the provider's, with its hosts' slots.
func (s sharing) Plan() Plan {
	p := s.Provider.Plan()
	p.Hosts *= s.per
	p.Where += fmt.Sprintf(", %d launches side by side on each host", s.per)
	return p
}
