package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/noise"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/plan"
	"github.com/bakeoff-dev/bakeoff/results"
)

// expectsRE finds where a shipped config's comments quote the planner:
// "`bakeoff validate` expects" at the config's own settings, or "with
// rounds: {min: 3, max: 16} it expects" and "with rounds: 6 it expects" at
// others.
var expectsRE = regexp.MustCompile("(`bakeoff validate` expects|with rounds: (?:\\{min: (\\d+), max: (\\d+)\\}|(\\d+)) it expects) ")

// commentText is the comments of a config file as one line: each comment's
// text after "# ", joined by single spaces.
func commentText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "# "); i >= 0 && strings.TrimSpace(line[:i]) == "" {
			words = append(words, strings.Fields(line[i+2:])...)
		}
	}
	return strings.Join(words, " ")
}

// TestShippedConfigsSayWhatThePlannerExpects: every shipped config says in
// its comments what `bakeoff validate` expects of it before any run (the
// rounds, launches, time and MDE of the plan line), and every other
// setting its comments advise is quoted with the planner's figures for it;
// each quote is the plan line the code prints today, so that the advice
// and the figures cannot drift apart.
func TestShippedConfigsSayWhatThePlannerExpects(t *testing.T) {
	configs, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("shipped configs: %v (%v)", configs, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, cfg := range configs {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			c, err := campaign.Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := commentText(t, cfg)
			quotes := expectsRE.FindAllStringSubmatchIndex(text, -1)
			own := false
			for _, m := range quotes {
				cc := *c
				switch {
				case m[4] >= 0:
					lo, _ := strconv.Atoi(text[m[4]:m[5]])
					hi, _ := strconv.Atoi(text[m[6]:m[7]])
					cc.MinRounds, cc.Rounds = lo, hi
				case m[8] >= 0:
					n, _ := strconv.Atoi(text[m[8]:m[9]])
					cc.MinRounds, cc.Rounds = 0, n
				default:
					own = true
				}
				want := planNight(&cc, t.TempDir(), now).head()
				if got := text[m[1]:]; !strings.HasPrefix(got, want) {
					t.Errorf("%s says\n\t%s …\nthe planner:\n\t%s", text[m[0]:m[1]], got[:min(len(got), len(want)+20)], want)
				}
			}
			if !own {
				t.Errorf("no comment says what `bakeoff validate` expects of it; the planner:\n\t%s",
					planNight(c, t.TempDir(), now).head())
			}
		})
	}
}

// recordedDemo is a run of `make demo` on the 2-core machine the
// repository is developed on, cut to what the planner reads (manifest,
// summary without the figures, and the journal's launch, ready and look
// lines): the demo's measured length, against which its plan is held.
const recordedDemo = "testdata/plan/results/demo/20261202T121839Z"

// TestDemoPlanAgainstARecordedRun: the plan before the first round of
// configs/demo.yaml is within a factor of two of the length of a recorded
// run of the demo, both from the campaign alone (the sim's model at its
// speed and the steps around it) and from that run as the earlier run in
// the results directory, whose source the plan line then names.
func TestDemoPlanAgainstARecordedRun(t *testing.T) {
	c, err := campaign.Load("../../configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := orchestrator.ReadJournal(filepath.Join(recordedDemo, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	took := entries[len(entries)-1].Time.Sub(entries[0].Time).Seconds()
	var launches []float64
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" && e.Outcome == orchestrator.OutcomeOK {
			launches = append(launches, e.DurationS)
		}
	}
	now := time.Date(2026, 12, 3, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name, root, source string
	}{
		{"from the campaign alone", t.TempDir(), "the sim's model at its speed (40×)"},
		{"from the recorded run", filepath.Dir(filepath.Dir(recordedDemo)), "the run of 2026-12-02 in " + recordedDemo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := planNight(c, tc.root, now)
			t.Logf("%s\nthe recorded run: %d launches in %.0f s, the plan %.0f s", n, len(launches), took, n.plan.Seconds)
			if !strings.Contains(n.prior.Source, tc.source) {
				t.Errorf("costs from %q, want %q", n.prior.Source, tc.source)
			}
			if ratio := n.plan.Seconds / took; ratio < 0.5 || ratio > 2 {
				t.Errorf("the plan expects %s, the recorded run took %s (×%.2f)", plan.Duration(n.plan.Seconds), plan.Duration(took), ratio)
			}
			if ratio := float64(n.plan.Rounds*len(c.Scenarios)) / float64(len(launches)); ratio < 0.5 || ratio > 2 {
				t.Errorf("the plan expects %d launches at most, the recorded run made %d", n.plan.Rounds*len(c.Scenarios), len(launches))
			}
		})
	}
	// The recorded run's costs, as the planner takes them: its launches'
	// median, and the time between them.
	n := planNight(c, filepath.Dir(filepath.Dir(recordedDemo)), now)
	per := n.in.RoundSeconds(n.in.At(0, 1).Requests) / float64(n.in.Scenarios)
	want := median(launches) + (took-sum(launches))/float64(len(launches))
	if math.Abs(per-want) > 0.2*want {
		t.Errorf("a launch is planned at %.1f s; the recorded run's median launch and the time between launches make %.1f s", per, want)
	}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// writeRun writes a run of campaign name under root, started at started,
// whose launches each took ready seconds to load and rest seconds in their
// other steps, on host, serving model, with fingerprint.
func writeRun(t *testing.T, root, name string, started time.Time, fingerprint, host, model string, ready, rest float64) string {
	t.Helper()
	dir := filepath.Join(root, name, started.UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := results.Manifest{Campaign: name, Run: filepath.Base(dir), Started: started, Fingerprint: fingerprint}
	if err := results.WriteJSONAtomic(filepath.Join(dir, results.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	s := results.Summary{Campaign: name, Run: m.Run, Fingerprint: fingerprint}
	for k := range 4 {
		s.Scenarios = append(s.Scenarios, results.ScenarioResult{Name: "s" + strconv.Itoa(k), Status: results.StatusOK, Round: 1,
			Dir: "s" + strconv.Itoa(k), HostName: host, Launch: "env -- sim --model-path " + model + " --port 1",
			PhaseSeconds: map[string]float64{"ready": ready, "stop": rest}})
	}
	if err := results.WriteSummaryAtomic(filepath.Join(dir, results.SummaryFile), &s); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPriorSources: the plan's costs come from the newest earlier run of
// the campaign, its load and steps even when it swept otherwise (the
// requests' cost then from the sim's model); without one, the load comes
// from another campaign's run that served the same model on the same host;
// and the plan line names each source.
func TestPriorSources(t *testing.T) {
	c, err := campaign.Load("../../configs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model := c.Scenarios[0].Model
	day := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)

	root := t.TempDir()
	writeRun(t, root, "other", day, "sha256:other", "local", model, 30, 2)
	writeRun(t, root, "elsewhere", day.Add(time.Hour), "sha256:other", "gpu-box", model, 90, 2)
	p := priorFor(c, root)
	if p.Load != 30 || !strings.Contains(p.Source, "the load from the run of 2026-12-01 in "+filepath.Join(root, "other")) ||
		!strings.Contains(p.Source, "no earlier run in "+filepath.Join(root, "demo")) {
		t.Errorf("another campaign's run on this host: load %g s, %q", p.Load, p.Source)
	}

	old := writeRun(t, root, "demo", day, "sha256:another-sweep", "local", model, 12, 5)
	p = priorFor(c, root)
	sim, _ := simPrior(c)
	if p.Load != 12 || p.Overhead != 5 || p.PerRequest[c.Sweep.Levels()[0]] != sim.PerRequest[c.Sweep.Levels()[0]] ||
		!strings.Contains(p.Source, "the run of 2026-12-01 in "+old+" (4 launches); it swept otherwise, so the requests' cost is the sim's model") {
		t.Errorf("an earlier run of another sweep: %+v", p)
	}
	n := planNight(c, root, day)
	if !strings.Contains(n.String(), "costs from the run of 2026-12-01 in "+old) || !strings.Contains(n.String(), "noise assumed: 2.0% a round") {
		t.Errorf("the plan line does not name the run, or the noise as assumed: %s", n)
	}

	// The host's noise profile, when earlier runs left one, is the noise
	// before the first round: twice the assumed standard deviation needs
	// more rounds.
	key, ok := noiseKey(c)
	if !ok {
		t.Fatal("the demo has no noise key")
	}
	if err := noise.Record(root, key, noise.Observation{Run: "demo/" + filepath.Base(old), At: day, Var: 4 * 0.02 * 0.02, DF: 10}); err != nil {
		t.Fatal(err)
	}
	noisy := planNight(c, root, day)
	if noisy.prior.RoundVar != 4*0.02*0.02 || !strings.Contains(noisy.String(), "noise from the host's noise profile ("+key.String()+": 1 run, 10 df): 4.1% a round") {
		t.Errorf("with the host's noise profile: %s", noisy)
	}
	if noisy.plan.Rounds <= n.plan.Rounds && noisy.plan.MDEPct <= n.plan.MDEPct {
		t.Errorf("twice the noise, yet no more rounds nor a larger MDE: %s against %s", noisy.head(), n.head())
	}
}

// TestRaceForecast: validate says what a race spends before any round: its
// first stage, its most, and the rounds the guarantee needs on the host's
// noise; a comparison with the baseline has no such line.
func TestRaceForecast(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for cfg, want := range map[string]string{
		"../../configs/demo-select.yaml": "race      13 configurations: a first stage of 2 rounds (26 launches), then only those that can still win, to round 6 at most (78 launches), and a confirmation round; on noise of ",
		"../../configs/demo.yaml":        "",
	} {
		c, err := campaign.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		printNight(&b, c, planNight(c, t.TempDir(), now))
		got := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "race") {
				got = l
			}
		}
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: race line %q, want %q…", cfg, got, want)
		}
	}
}
