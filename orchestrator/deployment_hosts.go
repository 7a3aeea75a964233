package orchestrator

import "github.com/bakeoff-dev/bakeoff/campaign"

// node is the host of node k of a launch on this worker.
func (w *worker) node(k int) *worker {
	if k < len(w.group) {
		return w.group[k]
	}
	return w
}

// addresses are what a launch spanning nodes nodes calls its hosts: the
// loopback when it runs on this one host, as a single server listens, else
// each host's address as the others reach it.
func (w *worker) addresses(nodes int) campaign.Addresses {
	if nodes <= 1 || len(w.group) <= 1 {
		return campaign.LocalAddresses
	}
	return func(k int) string { return w.node(k).addr }
}
