package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/placement"
	"github.com/bakeoff-dev/bakeoff/results"
)

// launchCount is how many servers a campaign starts: every scenario in every
// round. Over a fleet with more hosts than rounds, the rounds are split into parts
// (campaign.SplitLayout), each with its own baseline launch.
func launchCount(c *campaign.Campaign) int { return c.Layout(hostCount(c)).Launches() }

// serialLaunches is how many launches one host runs in a row: every
// scenario of each round (or part of a split round) it takes, the rounds
// shared out over the fleet's hosts (all of them, with a single host).
func serialLaunches(c *campaign.Campaign) int {
	hosts := hostCount(c)
	return c.Layout(hosts).Serial(hosts)
}

// hostCount is how many hosts run rounds at once, as the campaign's
// placement plans them (a fleet's hosts, an allocation's nodes).
func hostCount(c *campaign.Campaign) int {
	return max(placement.For(c, "", placement.Env{}).Plan().Hosts, 1)
}

// placesWord is n of the places campaign c runs rounds in at once: hosts,
// or with launches_per_host the slots of its hosts, each of which takes a
// round as a host does ("8 slots", not "8 hosts", for one 8-GPU host).
func placesWord(c *campaign.Campaign, n int) string {
	if c.LaunchesPerHost > 1 {
		return plural(n, "slot")
	}
	return plural(n, "host")
}

// spread is how many launches campaign c runs side by side on its hosts,
// on average: its launches over those one host runs in a row (1 on a
// single host). The planner counts launches one after another; its time
// over spread is the night's wall time.
func spread(c *campaign.Campaign) float64 {
	return float64(launchCount(c)) / float64(max(serialLaunches(c), 1))
}

// orderPeriod is how many rounds the launch order takes to repeat.
func orderPeriod(n int) int {
	if n%2 == 1 {
		return 2 * n
	}
	return max(n, 1)
}

// waitBound is the longest one launch can spend outside its sweep: the GPU
// memory waits before and after the server (none with gpu: none), loading until healthy, and the
// stop's grace period. The sweep is bounded only by request_timeout per
// request, far beyond any real sweep, so it is given in requests and tokens
// instead.
func waitBound(c *campaign.Campaign) time.Duration {
	return 2*c.GPU.WaitTimeout + c.Engine.HealthTimeout + c.Engine.StopGrace
}

// waitsShown bounds the waits of serial launches in a row and names their
// parts; a host without a GPU has no GPU memory wait to name.
func waitsShown(c *campaign.Campaign, serial int) string {
	gpu := ""
	if !c.GPU.None {
		gpu = fmt.Sprintf(", GPU memory ≤ 2 × %s", fmtDur(c.GPU.WaitTimeout))
	}
	return fmt.Sprintf("waits at most %s: per launch ready ≤ %s%s, stop ≤ %s",
		fmtDur(time.Duration(serial)*waitBound(c)), fmtDur(c.Engine.HealthTimeout), gpu, fmtDur(c.Engine.StopGrace))
}

// typicalLaunch is the median wall time of the launches that completed in
// the newest earlier run of the same campaign and sweep under root, with
// that run's directory; ok is false when there is none.
func typicalLaunch(root string, c *campaign.Campaign) (d time.Duration, n int, dir string, ok bool) {
	runs, err := os.ReadDir(filepath.Join(root, c.Name))
	if err != nil {
		return 0, 0, "", false
	}
	// Run directories are named by their UTC start time: newest last.
	for i := len(runs) - 1; i >= 0; i-- {
		dir := filepath.Join(root, c.Name, runs[i].Name())
		run, err := results.ReadRun(dir)
		if err != nil || !c.SameSweep(run.Manifest.Fingerprint) {
			continue
		}
		entries, err := orchestrator.ReadJournal(filepath.Join(dir, results.JournalFile))
		if err != nil {
			continue
		}
		var secs []float64
		for _, e := range entries {
			if e.Phase == orchestrator.PhaseScenario && e.Event == "end" && e.Outcome == orchestrator.OutcomeOK {
				secs = append(secs, e.DurationS)
			}
		}
		if len(secs) == 0 {
			continue
		}
		slices.Sort(secs)
		med := secs[len(secs)/2]
		if len(secs)%2 == 0 {
			med = (secs[len(secs)/2-1] + secs[len(secs)/2]) / 2
		}
		return time.Duration(med * float64(time.Second)).Round(time.Second), len(secs), dir, true
	}
	return 0, 0, "", false
}

// printRounds writes the rounds, their launch order, the verdict's margins
// and the duration estimate of `bakeoff validate`. root is where earlier
// runs of the campaign are looked for.
func printRounds(w io.Writer, c *campaign.Campaign, root string, now time.Time) {
	n, rounds := len(c.Scenarios), max(c.Rounds, 1)
	if c.Sequential() {
		fmt.Fprintf(w, "rounds    sequential: %d to %d rounds × %s, at most %d launches; after round %d and each one after it, a variant whose comparisons are all decided is launched no more; in this order while all are open:\n",
			c.MinRounds, rounds, plural(n, "scenario"), launchCount(c), c.MinRounds)
	} else {
		fmt.Fprintf(w, "rounds    %s × %s = %d launches, in this order:\n", plural(rounds, "round"), plural(n, "scenario"),
			n*rounds)
	}
	order := c.Order()
	shown := min(rounds, orderPeriod(n))
	for k := range shown {
		fmt.Fprintf(w, "          %d: %s\n", k+1, strings.Join(order[k], " "))
	}
	if rounds > shown {
		fmt.Fprintf(w, "          then again from round 1 (the order repeats every %s)\n", plural(shown, "round"))
	}
	if hosts := hostCount(c); c.Layout(hosts).Replicates != nil {
		l := c.Layout(hosts)
		fmt.Fprintf(w, "          over %d hosts each round is split into %d parts, each the baseline and a share of the variants in the counterbalanced order of its own: %d launches, the baseline once per part\n",
			hosts, l.Parts(1), l.Launches())
	}
	fmt.Fprintf(w, "verdict   equivalence_margin %s%%; min_effect %s%% (applies when rounds is 1)\n",
		fmtPct(c.EquivalenceMarginPct), fmtPct(c.MinEffectPct))
	printNight(w, c, planNight(c, root, now))

	launches := launchCount(c)
	// Time runs on every host at once: the time figures count the
	// launches one host runs in a row; the token figures count them all.
	serial := serialLaunches(c)
	if n := hostCount(c); n > 1 {
		l := c.Layout(n)
		unit := "round"
		if l.Replicates != nil {
			unit = "part"
		}
		place := "host"
		if c.LaunchesPerHost > 1 {
			place = "slot"
		}
		fmt.Fprintf(w, "duration  over %s, a %s at a time on each: at most %s per %s, %d launches in a row\n",
			placesWord(c, n), unit, plural((len(l.Order)+n-1)/n, unit), place, serial)
		fmt.Fprintf(w, "          %s\n", waitsShown(c, serial))
	} else {
		fmt.Fprintf(w, "duration  %s\n", waitsShown(c, serial))
	}
	s := c.Sweep
	reqs := 0
	// schedule is what no server speeds up: an open loop's arrivals (n−1
	// gaps of 1/rate per level, a trace's span at each speed) and sessions'
	// think times.
	var schedule time.Duration
	for _, lv := range s.Levels() {
		n := s.RequestsAt(lv) * max(s.Repeats, 1)
		reqs += n
		if s.Sessions != nil {
			schedule += s.SessionTime(lv) * time.Duration(max(s.Repeats, 1))
		} else if measure.IsSpeed(lv) {
			schedule += time.Duration(float64(s.TraceSpan) / lv.Speed * float64(max(s.Repeats, 1)))
		} else if measure.IsRate(lv) {
			schedule += time.Duration(float64(s.RequestsAt(lv)-1) / lv.Rate * float64(max(s.Repeats, 1)) * float64(time.Second))
		}
	}
	perLaunch := (reqs + s.Warmup) * s.MaxTokens
	each := fmt.Sprintf("%d tokens", s.MaxTokens)
	if mean, own := s.OutputTokens(); own {
		// Each prompt asks for its own length: the set's mean stands for
		// them all (requests cycle through the set).
		perLaunch = int(math.Round(float64(reqs+s.Warmup) * mean))
		each = fmt.Sprintf("about %.0f tokens (the prompts' own max_tokens, on average)", mean)
		if s.TraceRows > 0 {
			each = fmt.Sprintf("about %.0f tokens (the trace rows' own output lengths, on average)", mean)
		}
	}
	fmt.Fprintf(w, "          sweeps: per launch %d warm-up + %d requests of %s (%s tokens), %s tokens in all\n",
		s.Warmup, reqs, each, thousands(perLaunch), thousands(perLaunch*launches))
	if schedule > 0 {
		what := "arrivals"
		switch {
		case s.Sessions != nil && len(s.Rates) > 0:
			what = "arrivals and think times"
		case s.Sessions != nil:
			what = "think times"
		}
		fmt.Fprintf(w, "          %s: at least %s per launch, %s in all, however fast the server\n", what,
			fmtDur(schedule.Round(time.Second)), fmtDur((time.Duration(serial) * schedule).Round(time.Second)))
	}
	if d, k, dir, ok := typicalLaunch(root, c); ok {
		fmt.Fprintf(w, "          typical: %s, %s per launch (the median of %d launches in %s)\n",
			fmtDur((time.Duration(serial) * d).Round(time.Second)), fmtDur(d), k, dir)
	} else {
		fmt.Fprintf(w, "          typical: not known before a first run of this sweep (none in %s)\n",
			filepath.Join(root, c.Name))
	}
}

// printNight writes the night expected before the first round: its
// rounds, launches, time and MDE (or what its budget buys), what one launch
// costs and where that figure came from, the noise assumed, and the
// requests the rounds send.
func printNight(w io.Writer, c *campaign.Campaign, n night) {
	fmt.Fprintf(w, "plan      %s\n", n.head())
	if r := n.race(); r != "" {
		fmt.Fprintf(w, "race      %s\n", r)
	}
	fmt.Fprintf(w, "          %s\n", n.costs())
	fmt.Fprintf(w, "          %s\n", n.noise())
	lo := n.in.At(0, 1)
	switch {
	case planned(c) && n.plan.Scale > 1:
		fmt.Fprintf(w, "          rounds 1 to %d of %s, then %s as planned now; each look plans again\n",
			c.MinRounds, lo.RequestsText(), n.plan.RequestsText())
	case planned(c):
		fmt.Fprintf(w, "          each round %s as planned now; each look after round %d plans again\n", lo.RequestsText(), c.MinRounds)
	default:
		fmt.Fprintf(w, "          each round %s\n", lo.RequestsText())
	}
}

// fmtPct writes a percentage without trailing zeros.
func fmtPct(x float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", x), ".0") }

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
