package orchestrator

import (
	"fmt"
	"path"
	"slices"
)

// Launches side by side on one host (campaign.LaunchesPerHost, docs/CONFIG.md
// "Sharing a host"): each host is locked and prepared once, then runs K
// workers, its slots, each taking rounds as a host of a fleet does, with
// its own files in the host's workdir (pid files, logs and sweeps named for
// the slot) and its launches' GPUs and ports shifted into the slot
// (campaign.Slot). A round runs whole in one slot, on the same GPUs, so the
// verdict's pairs are within a slot, and each slot is a block of its own
// ("HOST/slotK" in the journal and the results). The GPU wait looks at the
// slot's GPUs only, and no power sampler runs: one reads every GPU of the
// host, the other slots' too.

// slotName names slot k (0-based) of a host, for journal lines, events and
// the results: HOST/slotK+1.
func slotName(host string, k int) string { return fmt.Sprintf("%s/slot%d", host, k+1) }

// forSlot is the paths of slot k: the workdir's, with the slot's own pid
// files, logs and sweeps.
func (p hostPaths) forSlot(k int) hostPaths {
	tag := fmt.Sprintf("slot%d", k+1)
	p.slotTag = tag + "-"
	p.serverPID = path.Join(p.workdir, "server-"+tag+".pid")
	p.sweepPID = path.Join(p.workdir, "sweep-"+tag+".pid")
	p.logs = path.Join(p.logs, tag)
	p.sweeps = path.Join(p.sweeps, tag)
	return p
}

// addSlots makes every host that takes rounds as many workers as the
// campaign runs launches side by side on a host, once its hosts are locked
// and prepared: the host's own worker is slot 1, the others follow it.
func (o *orch) addSlots() {
	k := o.c.LaunchesPerHost
	if k <= 1 {
		return
	}
	var out []*worker
	for _, w := range o.workers {
		out = append(out, w)
		if !w.leads() {
			continue
		}
		name := w.h.Name()
		w.slotID, w.tag, w.slot, w.paths = slotName(name, 0), slotName(name, 0), o.c.SlotOf(0), w.paths.forSlot(0)
		for i := 1; i < k; i++ {
			s := &worker{o: o, h: w.h, paths: w.paths.forSlot(i), hostBakeoff: w.hostBakeoff, sweepOnHost: w.sweepOnHost,
				facts: w.facts, lost: w.lost, addr: w.addr, slot: o.c.SlotOf(i), slotID: slotName(name, i), base: w}
			s.tag = s.slotID
			s.group = []*worker{s}
			out = append(out, s)
		}
	}
	o.workers = out
}

// id names the worker where rounds are placed: its host, or its slot of it.
func (w *worker) id() string {
	if w.slotID != "" {
		return w.slotID
	}
	return w.h.Name()
}

// slotGPUs are the GPUs of the host a launch on this worker uses, when it
// shares the host with other slots (nil otherwise: every GPU is its own).
// A role of gpus: 0 adds none; a launch none of whose roles uses a GPU has
// an empty list, not nil, which would be every GPU of the host.
func (s *scenarioRun) slotGPUs(n *worker) []int {
	if s.o.c.LaunchesPerHost <= 1 || s.dep == nil {
		return nil
	}
	out := []int{}
	for _, p := range s.dep.procs {
		if p.node == n {
			out = append(out, p.in.GPUs...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
