package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// procTableScript prints "pid ppid starttime" for every live process on a
// Linux host, from /proc alone. starttime (clock ticks after boot, field 22
// of stat) tells a process from a later one that reused its pid.
const procTableScript = `for d in /proc/[0-9]*; do
  s=
  read -r s 2>/dev/null < "$d/stat" || continue
  r=${s##*) }
  set -- $r
  case "$1" in Z|X|x) continue ;; esac
  echo "${d#/proc/} $2 ${20}"
done`

// procID names one process across pid reuse.
type procID struct {
	pid   int
	start string
}

type procRow struct {
	ppid  int
	start string
}

// procTable lists the live processes on h by pid.
func procTable(ctx context.Context, h Host) (map[int]procRow, error) {
	out, _, err := h.Run(ctx, procTableScript)
	if err != nil {
		return nil, fmt.Errorf("%s: listing processes: %w", h.Name(), err)
	}
	t := map[int]procRow{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		t[pid] = procRow{ppid: ppid, start: f[2]}
	}
	return t, nil
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
