package remote

// procID names one process across pid reuse.
type procID struct {
	pid   int
	start string
}

type procRow struct {
	ppid  int
	start string
}

// descendants returns every process below root in t, root excluded.
func descendants(t map[int]procRow, root int) []procID {
	children := map[int][]int{}
	for pid, r := range t {
		children[r.ppid] = append(children[r.ppid], pid)
	}
	var out []procID
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, procID{pid: c, start: t[c].start})
				queue = append(queue, c)
			}
		}
	}
	return out
}

// stillRunning returns the pids of ids that t shows alive as the same
// process (same start time), not a newcomer that reused the pid.
func stillRunning(t map[int]procRow, ids []procID) []int {
	var pids []int
	for _, id := range ids {
		if r, ok := t[id.pid]; ok && r.start == id.start {
			pids = append(pids, id.pid)
		}
	}
	return pids
}
