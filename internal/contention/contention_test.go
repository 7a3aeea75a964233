package contention

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// contentionEnv switches on the long campaigns (make contention); the
// others tune them.
const (
	contentionEnv = "BAKEOFF_CONTENTION"
	campaignsEnv  = "BAKEOFF_CONTENTION_CAMPAIGNS"
	kindsEnv      = "BAKEOFF_CONTENTION_KINDS"
	outEnv        = "BAKEOFF_CONTENTION_OUT"
	// reportEnv names directories of kept campaigns (the
	// BAKEOFF_CONTENTION_OUT of earlier runs, comma-separated) to judge
	// again and report on without running any.
	reportEnv     = "BAKEOFF_CONTENTION_REPORT"
	longCampaigns = 40
	falseCallTail = 0.02
	signTestAlpha = 0.01
	// longAtOnce campaigns run side by side under each load: on a machine
	// that other users keep busy, each campaign mostly waits for a core, and
	// three at a time take little longer than one. Each is the others'
	// neighbour, a load of the kind a GPU host's CPU carries anyway (a
	// server's own processes, a load generator).
	longAtOnce = 3
)

// longShape is the long test's campaign: the demo's sim and sweep made
// short enough for 40 campaigns of each kind. Three levels at 20× (one
// stream, a few, sixteen: a small campaign's, where the client still keeps
// up on a quiet machine, so that its comparisons are decided rather than
// doubted), 64 tokens a request, four fixed rounds of the three scenarios:
// an even number, after which every scenario has stood at each position of
// its round equally often on average (campaign.LaunchOrder).
var longShape = shape{speed: 20, loadTime: "2s", levels: []int{1, 4, 16}, maxTokens: 64, rounds: 4}

// TestContentionAA runs A/A campaigns under each kind of contention,
// longAtOnce at a time, the kinds taking turns (none, compile, busy, pulse,
// none, …) so that the machine's other users fall on every kind alike, and reports per kind the campaigns
// that called identical servers different, and the signs of their changes.
// It fails when a kind's false calls exceed what a correct rule exceeds 2%
// of the time (Limit), or when a variant's changes lean one way beyond
// chance (the sign test over campaigns, p < 0.01).
func TestContentionAA(t *testing.T) {
	if os.Getenv(contentionEnv) == "" {
		t.Skipf("%s=1 runs the long A/A campaigns under contention (make contention)", contentionEnv)
	}
	n := longCampaigns
	if s := os.Getenv(campaignsEnv); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number", campaignsEnv, s)
		}
	}
	kinds, err := kindsOf(os.Getenv(kindsEnv))
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv(outEnv)
	if out == "" {
		out = t.TempDir()
	}
	csvFile, err := os.Create(filepath.Join(out, "rounds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer csvFile.Close()
	rows := csv.NewWriter(csvFile)
	rows.Write([]string{"kind", "seed", "variant", "level", "round", "log_pct", "v_pos", "b_pos", "v_prev", "b_prev", "load_start", "load_end"})
	start := time.Now()
	byKind := map[Kind][]campaign{}
	for i := 0; i < n; i += longAtOnce {
		var seeds []int
		for seed := i; seed < min(i+longAtOnce, n); seed++ {
			seeds = append(seeds, seed)
		}
		for _, k := range kinds {
			for _, c := range underLoad(t, out, longShape, k, seeds) {
				byKind[k] = append(byKind[k], c)
				t.Log(c.summary())
				for _, r := range c.rounds {
					rows.Write([]string{string(k), strconv.Itoa(c.seed), r.variant, strconv.Itoa(r.level), strconv.Itoa(r.round),
						strconv.FormatFloat(r.logPct, 'f', 4, 64), strconv.Itoa(r.vPos), strconv.Itoa(r.bPos), r.vPrev, r.bPrev,
						strconv.FormatFloat(c.load1[0], 'f', 2, 64), strconv.FormatFloat(c.load1[1], 'f', 2, 64)})
				}
				rows.Flush()
			}
		}
	}
	t.Logf("%d campaigns of each of %d kinds in %s", n, len(kinds), time.Since(start).Round(time.Second))
	reportAll(t, byKind)
}

// allKinds labels the figures over every kind together.
const allKinds Kind = "every kind"

// reportAll reports each kind, then every kind together: a lean of one
// scenario that no single kind shows beyond chance can show over all.
func reportAll(t *testing.T, byKind map[Kind][]campaign) {
	t.Helper()
	var all []campaign
	for _, k := range Kinds {
		if len(byKind[k]) > 0 {
			report(t, k, byKind[k])
			all = append(all, byKind[k]...)
		}
	}
	if len(byKind) > 1 {
		report(t, allKinds, all)
	}
}

// TestContentionReport judges kept campaigns again (BAKEOFF_CONTENTION_REPORT)
// and reports on them as TestContentionAA does: the figures of
// docs/METHOD.md from the runs behind them, with the verdict as it is now.
func TestContentionReport(t *testing.T) {
	dirs := os.Getenv(reportEnv)
	if dirs == "" {
		t.Skipf("%s=DIR[,DIR…] reports on kept campaigns", reportEnv)
	}
	byKind := map[Kind][]campaign{}
	for _, d := range strings.Split(dirs, ",") {
		notes, err := filepath.Glob(filepath.Join(d, "*", campaignFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			c, err := readCampaign(filepath.Dir(n), verdict.Options{})
			if err != nil {
				t.Fatal(err)
			}
			byKind[c.kind] = append(byKind[c.kind], c)
		}
	}
	reportAll(t, byKind)
}

// report logs one kind's false-call rate and signs, and fails the test
// where they exceed chance.
func report(t *testing.T, k Kind, cs []campaign) {
	t.Helper()
	called := 0
	var loads []float64
	doubted, compared := 0, 0
	for _, c := range cs {
		if len(c.calls) > 0 {
			called++
		}
		loads = append(loads, c.load1[0], c.load1[1])
		doubted += c.doubted
		compared += c.compared
	}
	lo, hi := RateInterval(called, len(cs), 0.95)
	limit := Limit(len(cs), verdict.DefaultAlpha, falseCallTail)
	load, _ := MeanSE(loads)
	t.Logf("%s: a false call in %d of %d campaigns (%.1f%%, 95%% interval %.1f–%.1f%%; at most %d allowed); %d of %d comparisons doubted; mean load average %.1f",
		k, called, len(cs), 100*float64(called)/float64(len(cs)), 100*lo, 100*hi, limit, doubted, compared, load)
	if called > limit {
		t.Errorf("%s: identical servers called different in %d of %d campaigns, want at most %d", k, called, len(cs), limit)
	}
	for _, name := range variants {
		var means []float64
		var byLevel []string
		for _, c := range cs {
			var sum float64
			for _, d := range c.delta[name] {
				sum += d
			}
			if len(c.delta[name]) > 0 {
				means = append(means, sum/float64(len(c.delta[name])))
			}
		}
		for _, c := range longShape.levels {
			var ds []float64
			for _, cp := range cs {
				if d, ok := cp.delta[name][c]; ok {
					ds = append(ds, d)
				}
			}
			neg, pos := Signs(ds)
			m, se := MeanSE(ds)
			byLevel = append(byLevel, fmt.Sprintf("C=%d %d−/%d+ %+.2f±%.2f%%", c, neg, pos, m, se))
		}
		neg, pos := Signs(means)
		m, se := MeanSE(means)
		p := SignTest(neg, pos)
		t.Logf("%s: %s: campaign means %d negative, %d positive (sign test p=%.3f), mean %+.2f%% ± %.2f; by level %s",
			k, name, neg, pos, p, m, se, strings.Join(byLevel, ", "))
		if p < signTestAlpha {
			t.Errorf("%s: %s's changes lean one way: %d negative and %d positive campaigns (sign test p=%.4f)", k, name, neg, pos, p)
		}
		after, before := byOrder(cs, name)
		ma, sa := MeanSE(after)
		mb, sb := MeanSE(before)
		t.Logf("%s: %s: by launch order, each round's mean over levels: launched after the baseline %+.2f%% ± %.2f (%d rounds), before it %+.2f%% ± %.2f (%d)",
			k, name, ma, sa, len(after), mb, sb, len(before))
	}
}

// byOrder are variant name's rounds, each its log ratios' mean over the
// levels (percent), split by whether the variant was launched after the
// baseline in that round or before it: an effect of the launch order shows
// as a difference between the two.
func byOrder(cs []campaign, name string) (after, before []float64) {
	for _, c := range cs {
		sum, n, late := map[int]float64{}, map[int]int{}, map[int]bool{}
		for _, r := range c.rounds {
			if r.variant != name {
				continue
			}
			sum[r.round] += r.logPct
			n[r.round]++
			late[r.round] = r.vPos > r.bPos
		}
		for k, s := range sum {
			if late[k] {
				after = append(after, s/float64(n[k]))
			} else {
				before = append(before, s/float64(n[k]))
			}
		}
	}
	return after, before
}

// kindsOf reads a comma-separated list of kinds; empty: every kind.
func kindsOf(list string) ([]Kind, error) {
	if list == "" {
		return Kinds, nil
	}
	var kinds []Kind
	for _, name := range strings.Split(list, ",") {
		k, err := ParseKind(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}
