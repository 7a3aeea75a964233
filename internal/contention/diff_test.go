package contention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/verdict/rundiff"
)

// diffEnv switches on the study of bakeoff diff on identical runs (make
// diff-aa); runSigmaEnv sets the run effect each campaign draws.
const (
	diffEnv     = "BAKEOFF_CONTENTION_DIFF"
	runSigmaEnv = "BAKEOFF_CONTENTION_RUN_SIGMA"
	// defaultRunSigma is the run effect's sd when runSigmaEnv is unset:
	// the size of the false regressions two identical demo runs showed on
	// a busy 2-core machine before the run was a unit (−4.7% to −11%).
	defaultRunSigma = 0.03
	// diffBound is the share of pairs of identical runs a diff may call
	// REGRESSED: 5%.
	diffBound = 0.05
)

// TestContentionDiff runs pairs of identical campaigns under each kind of
// contention, every campaign slowed as a whole by a run effect of its own
// (BAKEOFF_SIM_RUN_FACTOR, log-normal, sd BAKEOFF_CONTENTION_RUN_SIGMA),
// and diffs each pair as `bakeoff diff` does with no history (the ratios
// to each run's baseline judged alone) and with the rule before the run
// was a unit (absolute figures against the launches' variance). It
// reports per kind how many pairs each called REGRESSED, and fails when
// the diff did in more than 5% of them.
func TestContentionDiff(t *testing.T) {
	kept := os.Getenv(reportEnv)
	if os.Getenv(diffEnv) == "" {
		t.Skipf("%s=1 runs pairs of identical campaigns under contention and diffs them (make diff-aa); with %s=DIR it diffs those kept in DIR/diff", diffEnv, reportEnv)
	}
	n := longCampaigns
	if s := os.Getenv(campaignsEnv); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number", campaignsEnv, s)
		}
	}
	sigma := defaultRunSigma
	if s := os.Getenv(runSigmaEnv); s != "" {
		var err error
		if sigma, err = strconv.ParseFloat(s, 64); err != nil || sigma < 0 {
			t.Fatalf("%s=%q: want a standard deviation, e.g. 0.03", runSigmaEnv, s)
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
	// Apart from TestContentionAA's campaigns, in the same folder.
	out = filepath.Join(out, "diff")
	for _, k := range kinds {
		var runs []*results.Run
		if kept != "" {
			// The pairs an earlier study kept, in seed order, diffed again.
			for seed := 0; ; seed++ {
				run, err := results.ReadRun(filepath.Join(campaignDir(filepath.Join(kept, "diff"), k, seed), runDir))
				if err != nil {
					break
				}
				runs = append(runs, run)
			}
		}
		for i := 0; kept == "" && i < 2*n; i += longAtOnce {
			var seeds []int
			for seed := i; seed < min(i+longAtOnce, 2*n); seed++ {
				seeds = append(seeds, seed)
			}
			factors := map[int]float64{}
			for _, seed := range seeds {
				factors[seed] = math.Exp(sigma * rand.New(rand.NewPCG(uint64(seed), 0xd1ff)).NormFloat64())
			}
			for _, c := range underLoadWith(t, out, longShape, k, seeds, func(w *world, seed int) { withRunFactor(t, w, factors[seed]) }) {
				run, err := results.ReadRun(c.dir)
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, run)
			}
		}
		if len(runs) < 2 {
			t.Logf("%s: no pair of campaigns", k)
			continue
		}
		regressed, legacy := 0, 0
		for p := 0; p+1 < len(runs); p += 2 {
			d, err := rundiff.Compare(runs[p], runs[p+1], rundiff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l, err := rundiff.Compare(runs[p], runs[p+1], rundiff.Options{WithinRunOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.Regressed() {
				regressed++
			}
			if l.Regressed() {
				legacy++
			}
		}
		pairs := len(runs) / 2
		t.Logf("%s: %d pairs of identical runs (run effect sd %.0f%%): REGRESSED in %d (%.1f%%); the within-run rule in %d (%.1f%%)",
			k, pairs, 100*sigma, regressed, 100*float64(regressed)/float64(pairs), legacy, 100*float64(legacy)/float64(pairs))
		if float64(regressed) > diffBound*float64(pairs) {
			t.Errorf("%s: identical runs REGRESSED in %d of %d pairs, more than %.0f%%", k, regressed, pairs, 100*diffBound)
		}
	}
}

// withRunFactor slows every server of w's campaign by factor, through the
// campaign's engine.env (cmdline.SimRunFactorEnv).
func withRunFactor(t *testing.T, w *world, factor float64) {
	t.Helper()
	data, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	env := mapValue(t, mapValue(t, doc.Content[0], "engine"), "env")
	env.Content = append(env.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: cmdline.SimRunFactorEnv},
		&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: fmt.Sprintf("%.6f", factor)})
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.config, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
