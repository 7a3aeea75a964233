package orchestrator

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

// FingerprintChangedError refuses a resume whose sweep differs from the one
// the run was started with: mixing them would compare unlike measurements.
type FingerprintChangedError struct {
	RunDir   string
	Old, New string
	// Diffs names each differing sweep setting as "field: old → new".
	Diffs []string
}

func (e *FingerprintChangedError) Error() string {
	msg := fmt.Sprintf("cannot resume %s: the sweep changed (fingerprint %s, now %s)", e.RunDir, e.Old, e.New)
	if len(e.Diffs) > 0 {
		msg += ":\n  " + strings.Join(e.Diffs, "\n  ")
	}
	return msg + "\nstart a new run instead, or restore the campaign file"
}

// sweepInfo is the manifest's record of the sweep, taken from the same
// Spec the load generator gets.
func sweepInfo(s loadgen.Spec, promptSet string, c *campaign.Campaign) results.SweepInfo {
	return results.SweepInfo{Concurrency: s.Concurrency, Rates: s.Rates, Burstiness: s.Burstiness, Requests: s.Requests, MaxTokens: s.MaxTokens,
		Warmup: s.Warmup, Temperature: s.Temperature, IgnoreEOS: s.IgnoreEOS, Endpoint: s.Endpoint,
		Repeats: s.Repeats, PromptSet: promptSet, Speeds: s.Speeds, BlockSize: s.BlockSize, InputLengths: c.InputLengths(),
		Percentiles: s.Percentiles}
}

// sweepDiffs lists the SweepInfo fields that differ, for a refusal a person
// can act on.
func sweepDiffs(a, b results.SweepInfo) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			name := va.Type().Field(i).Tag.Get("json")
			out = append(out, fmt.Sprintf("%s: %v → %v", name, x, y))
		}
	}
	return out
}

// openRun creates the run directory (or opens the resumed one), writes the
// manifest, and opens the journal.
func (o *orch) openRun() error {
	fp := o.c.Fingerprint()
	start := o.now().UTC()
	o.man = results.Manifest{Campaign: o.c.Name, Run: start.Format(RunIDFormat), Started: start,
		ConfigFile: o.c.File, Fingerprint: fp, Baseline: o.c.Baseline, Sweep: sweepInfo(sweepSpec(o.c.Sweep, "", ""), o.c.SentPromptSet(), o.c),
		BakeoffVersion: o.opt.Version, Host: results.HostFacts{Name: o.firstHostName()}, Resolved: o.c,
		Rounds: max(o.c.Rounds, 1), MinRounds: o.c.MinRounds, Budget: budgetText(o.c), MinEffectPct: o.c.MinEffectPct, EquivalenceMarginPct: o.c.EquivalenceMarginPct,
		SLO: o.c.SLO, Allocation: o.opt.Allocation, ScenarioGPUs: o.c.GPUCounts(), NoisePrior: o.opt.NoisePrior}
	for _, m := range o.c.VerdictMetrics {
		o.man.VerdictMetrics = append(o.man.VerdictMetrics, results.VerdictMetric{Name: m.Name, MarginPct: m.MarginPct})
	}
	if o.c.Question == campaign.QuestionSelect {
		o.man.Select = selectInfo(o.c)
	}
	o.man.Order, o.man.Replicates = o.layout()
	for _, s := range o.c.Scenarios {
		o.man.Scenarios = append(o.man.Scenarios, s.Name)
	}
	o.planLaunches()
	o.finished = map[LaunchKey]string{}
	o.finishedOn = map[LaunchKey]string{}
	o.attempts = map[LaunchKey]int{}
	o.homes = map[int]string{}
	o.lastPos = -1
	switch {
	case o.opt.ResumeDir != "":
		o.runDir = o.opt.ResumeDir
		old, err := results.ReadRun(o.runDir)
		if err != nil {
			return fmt.Errorf("resuming %s: %w", o.runDir, err)
		}
		if !o.c.SameSweep(old.Manifest.Fingerprint) {
			return &FingerprintChangedError{RunDir: o.runDir, Old: old.Manifest.Fingerprint, New: fp,
				Diffs: sweepDiffs(old.Manifest.Sweep, o.man.Sweep)}
		}
		// A run written with the legacy fingerprint keeps it, so that its
		// launches old and new carry one fingerprint and the verdict's
		// check sees one sweep.
		o.man.Fingerprint = old.Manifest.Fingerprint
		if old.Manifest.Campaign != o.c.Name {
			return fmt.Errorf("cannot resume %s: it is a run of campaign %q, not %q", o.runDir,
				old.Manifest.Campaign, o.c.Name)
		}
		if err := o.checkResumable(old); err != nil {
			return err
		}
		// The run keeps its identity; the resolved config is refreshed so the
		// manifest describes the scenarios as they run from now on.
		o.man.Run, o.man.Started, o.man.Host = old.Manifest.Run, old.Manifest.Started, old.Manifest.Host
		o.man.Hosts, o.man.Fleet = old.Manifest.Hosts, old.Manifest.Fleet
		o.man.Engines = old.Manifest.Engines // the builds its rounds so far ran on
		// Its looks so far leaned on the prior it started with.
		o.man.NoisePrior = old.Manifest.NoisePrior
		// The rounds already laid out keep their rows: a sequential
		// campaign's looks left decided variants out of them. A split
		// layout is kept whole, and a run laid out unsplit stays so, so
		// that a resumed run's rounds mean what they meant.
		switch {
		case old.Manifest.Split():
			o.man.Order, o.man.Replicates = old.Manifest.Order, old.Manifest.Replicates
			o.planLaunches()
		case o.man.Split():
			o.man.Order, o.man.Replicates = o.c.Order(), nil
			o.planLaunches()
		}
		copy(o.man.Order, old.Manifest.Order)
		o.sum = old.Summary
		entries, err := ReadJournal(filepath.Join(o.runDir, results.JournalFile))
		if err != nil {
			return err
		}
		o.finished = Finished(entries)
		o.attempts = Attempts(entries)
		o.readPlacement(entries)
	case o.opt.OutDir != "":
		o.runDir = o.opt.OutDir
	default:
		o.runDir = filepath.Join(o.opt.ResultsRoot, o.c.Name, o.man.Run)
	}
	if o.opt.ResumeDir == "" {
		if _, err := os.Stat(filepath.Join(o.runDir, results.ManifestFile)); err == nil {
			return fmt.Errorf("%s already holds a run; use --resume %s to continue it", o.runDir, o.runDir)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checking %s: %w", o.runDir, err)
		}
		o.sum = results.Summary{Campaign: o.c.Name, Run: o.man.Run, Fingerprint: fp, Baseline: o.c.Baseline}
	}
	if err := os.MkdirAll(o.runDir, results.DirMode); err != nil {
		return fmt.Errorf("creating run directory: %w", err)
	}
	if err := results.WriteJSONAtomic(filepath.Join(o.runDir, results.ManifestFile), o.man); err != nil {
		return err
	}
	jr, err := OpenJournal(filepath.Join(o.runDir, results.JournalFile))
	if err != nil {
		return err
	}
	o.jr = jr
	if a := o.opt.Allocation; a != nil {
		// The journal keeps every allocation a run used, the manifest the
		// newest.
		now := o.now()
		o.journal(JournalEntry{Time: now, Phase: PhaseAllocation, Event: "start",
			Allocation: a.System + " job " + a.JobID + " on " + strings.Join(a.Nodes, ",")})
	}
	return nil
}

// checkResumable refuses a resume that would break the rounds already run:
// a run written before rounds (its files are laid out per scenario, not per
// launch), fewer rounds than the run has, or a different list of scenarios
// (the launch order of the rounds already run would no longer be the one
// recorded). More rounds are fine: the order of round k depends only on k.
func (o *orch) checkResumable(old *results.Run) error {
	if old.Manifest.Rounds == 0 {
		return fmt.Errorf("cannot resume %s: it was written by a bakeoff without rounds; start a new run (report and diff still read it)", o.runDir)
	}
	if n := old.Rounds(); o.man.Rounds < n {
		return fmt.Errorf("cannot resume %s: it has %d rounds and the campaign now asks for %d; set rounds: %d or more",
			o.runDir, n, o.man.Rounds, n)
	}
	if !slices.Equal(old.Manifest.Scenarios, o.man.Scenarios) {
		return fmt.Errorf("cannot resume %s: its scenarios were %s and are now %s; the launch order of the rounds already run would change; start a new run",
			o.runDir, strings.Join(old.Manifest.Scenarios, ", "), strings.Join(o.man.Scenarios, ", "))
	}
	return nil
}

// writeManifest rewrites the manifest (after host facts are known).
func (o *orch) writeManifest() error {
	if o.runDir == "" {
		return nil // the preflight alone (Preflight) keeps no run
	}
	return results.WriteJSONAtomic(filepath.Join(o.runDir, results.ManifestFile), o.man)
}

// recordResult puts a launch's attempt into summary.json (replacing its
// earlier attempt; campaign order, then round order) and writes it
// atomically, so a crash at any instant leaves the last complete summary on
// disk.
func (o *orch) recordResult(r results.ScenarioResult) error {
	// The launch goes on adding to its own PhaseSeconds without o.mu while
	// another host's launch writes the summary: the summary keeps a copy.
	r.PhaseSeconds = maps.Clone(r.PhaseSeconds)
	replaced := false
	for i := range o.sum.Scenarios {
		if o.sum.Scenarios[i].Name == r.Name && o.sum.Scenarios[i].RoundOf() == r.RoundOf() {
			o.sum.Scenarios[i] = r
			replaced = true
		}
	}
	if !replaced {
		o.sum.Scenarios = append(o.sum.Scenarios, r)
	}
	order := map[string]int{}
	for i, s := range o.c.Scenarios {
		order[s.Name] = i
	}
	sortByOrder(o.sum.Scenarios, order)
	o.sum.Updated = o.now().UTC()
	return results.WriteSummaryAtomic(filepath.Join(o.runDir, results.SummaryFile), &o.sum)
}

// sortByOrder sorts results by campaign order, then round; stable, so
// nothing else moves.
func sortByOrder(list []results.ScenarioResult, order map[string]int) {
	slices.SortStableFunc(list, func(a, b results.ScenarioResult) int {
		if d := order[a.Name] - order[b.Name]; d != 0 {
			return d
		}
		return a.RoundOf() - b.RoundOf()
	})
}

// archiveAttempt moves a launch's earlier files to
// SCENARIO/round-K/history/N/ so a rerun starts in a clean directory and
// nothing measured is lost. It returns where they went, relative to the run
// directory, or "" when there was nothing to move.
func (o *orch) archiveAttempt(name string, round, attempt int) (string, error) {
	dir := filepath.Join(o.runDir, filepath.FromSlash(results.LaunchDir(name, round)))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("archiving %s: %w", dir, err)
	}
	var move []string
	for _, e := range entries {
		if e.Name() != results.HistoryDir {
			move = append(move, e.Name())
		}
	}
	if len(move) == 0 {
		return "", nil
	}
	rel := results.LaunchHistoryDir(name, round, attempt)
	for n := attempt; ; n++ {
		rel = results.LaunchHistoryDir(name, round, n)
		if _, err := os.Stat(filepath.Join(o.runDir, rel)); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	dest := filepath.Join(o.runDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dest, results.DirMode); err != nil {
		return "", fmt.Errorf("archiving %s: %w", dir, err)
	}
	for _, n := range move {
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(dest, n)); err != nil {
			return "", fmt.Errorf("archiving %s: %w", dir, err)
		}
	}
	return rel, nil
}

// history is the list of a launch's earlier attempts once attempt archived
// (the one before the attempt starting now) has been moved to moved (empty
// when nothing was moved): the summary's record of the launch, pointed at
// the folder its files now live in, after the attempts it already listed.
// An archived attempt the summary never recorded (the orchestrator was
// killed during it) is listed as pending, so its partial files are not lost
// from view.
func (o *orch) history(name string, round, archived int, moved string) []results.ScenarioResult {
	var prev *results.ScenarioResult
	for i := range o.sum.Scenarios {
		if o.sum.Scenarios[i].Name == name && o.sum.Scenarios[i].RoundOf() == round {
			prev = &o.sum.Scenarios[i]
		}
	}
	interrupted := results.ScenarioResult{Name: name, Round: round, Status: results.StatusPending,
		Attempt: archived, Fingerprint: o.man.Fingerprint, Reason: "interrupted", Dir: moved}
	if prev == nil {
		if moved == "" {
			return nil
		}
		return []results.ScenarioResult{interrupted}
	}
	hist := slices.Clone(prev.History)
	last := *prev
	last.History = nil
	if launchDir := results.LaunchDir(name, round); last.Dir == "" || last.Dir == launchDir {
		// Its files were in the launch's folder, which has just been
		// moved (or was moved when the unrecorded attempt began).
		last.Dir = results.LaunchHistoryDir(name, round, last.Attempt)
		if last.Attempt == archived && moved != "" {
			last.Dir = moved
		}
	}
	hist = append(hist, last)
	if moved != "" && last.Attempt != archived {
		hist = append(hist, interrupted)
	}
	return hist
}

// budgetText is the campaign's budget as the manifest records it.
func budgetText(c *campaign.Campaign) string {
	switch {
	case c.Deadline != nil:
		return fmt.Sprintf("until %02d:%02d", c.Deadline.Hour, c.Deadline.Minute)
	case c.Budget > 0:
		return strings.TrimSuffix(strings.TrimSuffix(c.Budget.String(), "0s"), "0m")
	}
	return ""
}

// selectInfo is a selection campaign's race as its manifest records it,
// the defaults filled: the indifference zone is the campaign's
// equivalence margin unless select.delta gives one.
func selectInfo(c *campaign.Campaign) *results.SelectInfo {
	info := &results.SelectInfo{DeltaPct: c.Select.DeltaPct, PCS: c.Select.PCS, FirstStage: c.Select.FirstStage}
	if info.DeltaPct == 0 {
		info.DeltaPct = c.EquivalenceMarginPct
	}
	if info.PCS == 0 {
		info.PCS = selection.DefaultPCS
	}
	return info
}
