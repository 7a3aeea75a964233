package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/results"
)

// The scale campaign: launches as short as the orchestrator allows (a sim
// at 100× that loads in half a simulated minute and sweeps two small
// levels), so that what is measured is the placement and the orchestrator's
// own cost, not the engine's.
const (
	scaleSpeed    = 100
	scaleLoadTime = 30 * time.Second
	scaleRounds   = 3
	scaleInterval = time.Second
	// scaleSizes is the default list of SCENARIOSxROUNDSxHOSTS campaigns, the
	// largest first: it is the one the figures are about.
	scaleSizes = "100x3x16,30x3x16,10x3x16,10x3x4,3x16x16"
)

// size is one scale campaign: scenarios × rounds over hosts.
type size struct{ scenarios, rounds, hosts int }

// parseSizes reads a list of SCENARIOSxHOSTS (rounds from
// BAKEOFF_SCALE_ROUNDS) or SCENARIOSxROUNDSxHOSTS.
func parseSizes(t *testing.T, s string, rounds int) []size {
	var out []size
	for _, f := range strings.Split(s, ",") {
		var n []int
		for _, x := range strings.Split(strings.TrimSpace(f), "x") {
			v, err := strconv.Atoi(x)
			if err != nil || v < 1 {
				n = nil
				break
			}
			n = append(n, v)
		}
		switch len(n) {
		case 2:
			out = append(out, size{n[0], rounds, n[1]})
		case 3:
			out = append(out, size{n[0], n[1], n[2]})
		default:
			t.Fatalf("BAKEOFF_SCALE_SIZES: bad size %q (want SCENARIOSxHOSTS or SCENARIOSxROUNDSxHOSTS)", f)
		}
	}
	return out
}

// TestScale runs campaigns of growing size over growing fleets and reports
// each one's makespan against the ideal (the launches' total time over the
// hosts) and the orchestrator's CPU time and peak memory. It checks only
// that each campaign finished whole; the figures are for
// docs/PERFORMANCE.md.
func TestScale(t *testing.T) {
	if os.Getenv(scaleEnv) == "" {
		t.Skipf("the scale measurement runs with %s=1 (make scale)", scaleEnv)
	}
	sizes := scaleSizes
	if v := os.Getenv("BAKEOFF_SCALE_SIZES"); v != "" {
		sizes = v
	}
	rounds := envInt(t, "BAKEOFF_SCALE_ROUNDS", scaleRounds)
	out := outDir(t, "scale")
	type row struct {
		sz   size
		text string
	}
	var rows []row
	for _, sz := range parseSizes(t, sizes, rounds) {
		name := fmt.Sprintf("%dx%d-%dhosts", sz.scenarios, sz.rounds, sz.hosts)
		t.Run(name, func(t *testing.T) {
			r := scaleOnce(t, filepath.Join(out, name), sz)
			rows = append(rows, row{sz, r})
			t.Log(r)
		})
	}
	// The table in order of hosts, then scenarios, whatever order they ran.
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].sz, rows[j].sz
		if a.hosts != b.hosts {
			return a.hosts < b.hosts
		}
		if a.rounds != b.rounds {
			return a.rounds < b.rounds
		}
		return a.scenarios < b.scenarios
	})
	var table strings.Builder
	fmt.Fprintf(&table, "| scenarios × rounds | hosts | rounds run (parts) | launches | launch time, total (s) | ideal = total / hosts (s) | best by whole rounds (s) | makespan (s) | makespan / ideal | makespan / ideal of scenarios × rounds | orchestrator CPU (s) | CPU per launch (ms) | peak RSS (MiB) | live heap after GC, last / max (MiB) | FDs max |\n")
	fmt.Fprintf(&table, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		table.WriteString(r.text)
	}
	t.Log("\n" + table.String())
	if err := os.WriteFile(filepath.Join(out, "table.md"), []byte(table.String()), 0o600); err != nil {
		t.Error(err)
	}
}

// scaleOnce runs one campaign and returns its table row.
func scaleOnce(t *testing.T, out string, sz size) string {
	rounds := sz.rounds
	f := newFleet(t, sz.hosts, out)
	p := plan{name: "scale", scenarios: sz.scenarios, rounds: rounds, levels: []int{1, 4},
		requests: 8, maxTokens: 32, warmup: 1, speed: scaleSpeed, loadTime: scaleLoadTime}
	cfg := f.write(p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	r := f.start(ctx, cfg, scaleInterval)
	res := f.wait(r)
	if res.code != 0 {
		t.Fatalf("bakeoff run exited %d\n%s", res.code, tail(res.stderr, 3000))
	}
	run, err := results.ReadRun(r.runDir)
	if err != nil {
		t.Fatal(err)
	}
	// A fleet with more hosts than rounds splits each round into parts,
	// each with its own baseline launch: the launches are the layout's.
	launches := 0
	for _, row := range run.Manifest.Order {
		launches += len(row)
	}
	if n := len(run.Summary.Scenarios); n != launches || launches < p.launches() {
		t.Fatalf("%d launches in the summary, want %d (the campaign's %d, and a baseline per part)", n, launches, p.launches())
	}
	// A launch's time is its scenario phase; a round's (a part's, when
	// split) is the sum of its launches', since it runs whole on one host.
	var total float64
	perRound := map[int]float64{}
	var first, last time.Time
	for _, e := range readJournal(r.runDir) {
		if first.IsZero() {
			first = e.Time
		}
		last = e.Time
		if e.Phase == "scenario" && e.Event == "end" {
			d := e.DurationS
			total += d
			perRound[max(e.Round, 1)] += d
		}
	}
	ideal := total / float64(sz.hosts)
	// The campaign's own work, without the split's extra baseline
	// launches, at the mean launch time: what the goal is measured against.
	plain := total * float64(p.launches()) / float64(launches) / float64(sz.hosts)
	// Placing whole rounds (or parts), no schedule beats the longest, nor
	// the work spread over min(hosts, rounds) hosts.
	var longest float64
	for _, d := range perRound {
		longest = max(longest, d)
	}
	best := max(longest, total/float64(min(sz.hosts, len(perRound))))
	makespan := res.wall.Seconds()
	cpu := (res.user + res.system).Seconds()
	fds := Summarize(res.samples, func(s Sample) float64 { return float64(s.FDs) })
	heap := Summarize(LiveHeap(res.stderr), func(s Sample) float64 { return float64(s.RSSKiB) / 1024 })
	t.Logf("journal span %.1fs, process wall %.1fs", last.Sub(first).Seconds(), makespan)
	return fmt.Sprintf("| %d × %d | %d | %d | %d | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.0f | %.1f | %.0f / %.0f | %.0f |\n",
		sz.scenarios, rounds, sz.hosts, len(run.Manifest.Order), launches, total, ideal, best, makespan, makespan/ideal, makespan/plain,
		cpu, 1000*cpu/float64(launches), float64(res.maxRSSKiB)/1024, heap.End, heap.Max, fds.Max)
}
