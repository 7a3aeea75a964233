package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// A launch of a deployment over N nodes runs on N hosts at once, so a
// campaign whose largest launch spans N nodes takes its hosts (a fleet's,
// or a Slurm allocation's nodes) N at a time: each group is led by its
// first host, which takes rounds as a single host does, runs the sweep and
// names the group in journal lines and events; the others are its nodes 1
// to N−1. Every host is locked, prepared and asked for its engines' flags
// as any host of a fleet is. A round runs whole on one group, so each
// variant is still compared with the baseline launched beside it; a launch
// of a single server runs on the group's first host. Hosts left over when
// the fleet does not divide by N run nothing, and a group one of whose
// hosts is lost is lost whole.

// node is the host of node k of a launch on this worker.
func (w *worker) node(k int) *worker {
	if k < len(w.group) {
		return w.group[k]
	}
	return w
}

// nodes are the hosts of a launch on this worker, this one first.
func (w *worker) nodes() []*worker {
	if len(w.group) == 0 {
		return []*worker{w}
	}
	return w.group
}

// leads reports whether the worker takes rounds: it is not another host's
// node, nor left over.
func (w *worker) leads() bool { return w.leader == nil && w.spare == "" }

// addresses are what a launch spanning nodes nodes calls its hosts: the
// loopback when it runs on this one host, as a single server listens, else
// each host's address as the others reach it.
func (w *worker) addresses(nodes int) campaign.Addresses {
	if nodes <= 1 || len(w.group) <= 1 {
		return campaign.LocalAddresses
	}
	return func(k int) string { return w.node(k).addr }
}

// groupHosts makes groups of the campaign's hosts, in their order, as many
// as one launch needs.
func (o *orch) groupHosts() {
	per := o.c.NodesPerLaunch()
	if per <= 1 {
		return
	}
	for i := 0; i < len(o.workers); i += per {
		if i+per > len(o.workers) {
			for _, w := range o.workers[i:] {
				w.spare = fmt.Sprintf("left over: every launch takes %d hosts and %d of the %d hosts remain", per, len(o.workers)-i, len(o.workers))
				w.group = nil
			}
			return
		}
		lead := o.workers[i]
		lead.group = append([]*worker(nil), o.workers[i:i+per]...)
		for _, m := range lead.group[1:] {
			m.leader, m.group = lead, nil
		}
	}
}

// leaders counts the groups that can take rounds.
func (o *orch) leaders() int {
	n := 0
	for _, w := range o.workers {
		if w.leads() {
			n++
		}
	}
	return n
}

// loseBrokenGroups gives up, before the first round, the hosts left over
// and every group one of whose hosts could not be locked or prepared,
// releasing the locks its other hosts hold.
func (o *orch) loseBrokenGroups(ctx context.Context) {
	for _, w := range o.workers {
		if w.spare != "" && w.lost == "" {
			w.lose(0, w.spare)
			w.release(ctx)
		}
		if !w.leads() || len(w.group) <= 1 {
			continue
		}
		var why []string
		for k, n := range w.nodes() {
			if n.lost != "" {
				why = append(why, fmt.Sprintf("node %d, %s: %s", k, n.h.Name(), n.lost))
			}
		}
		if len(why) == 0 {
			continue
		}
		if w.lost == "" {
			w.lose(0, "a host of its group is lost ("+strings.Join(why, "; ")+")")
		}
		w.releaseGroup(ctx)
	}
}

// releaseGroup releases the lock of every host of the worker's group.
func (w *worker) releaseGroup(ctx context.Context) {
	for _, n := range w.nodes() {
		if !n.unreachable {
			n.release(ctx)
		}
	}
}

// readAddress reads the address the other hosts of a group reach this one
// at: the one its SSH connection came in on (the third field of the
// session's SSH_CONNECTION), as sshd sees it; this machine's loopback for
// the local host.
func (w *worker) readAddress(ctx context.Context) error {
	if w.o.c.Host.Local {
		w.addr = campaign.LocalAddresses(0)
		return nil
	}
	out, _, err := w.h.Run(ctx, addressCmd)
	if err != nil {
		return fmt.Errorf("reading the address of %s: %w", w.h.Name(), err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		if _, dry := w.h.(*remote.Dry); dry {
			w.addr = w.h.Name()
			return nil
		}
		return fmt.Errorf("reading the address of %s: its sessions have no SSH_CONNECTION (%q)", w.h.Name(), strings.TrimSpace(string(out)))
	}
	w.addr = f[2]
	return nil
}

// addressCmd prints the session's SSH_CONNECTION: client address and port,
// server address and port.
const addressCmd = `printf '%s\n' "${SSH_CONNECTION:-}"`

// groupReachable reports whether a launch of a deployment over several
// hosts still has one that answers: its teardown then stops what runs
// there, though the group's first host is lost.
func (s *scenarioRun) groupReachable() bool {
	if s.dep == nil {
		return false
	}
	for _, n := range s.w.nodes() {
		if !n.unreachable {
			return true
		}
	}
	return false
}
