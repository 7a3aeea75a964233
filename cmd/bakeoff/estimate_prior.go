package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/noise"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/plan"
	"github.com/bakeoff-dev/bakeoff/prompts"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/model"
)

// What a launch costs before any round of a run has measured it: the
// planner's prior. The best source is the newest earlier run of the same
// campaign under the results directory, whose launches were timed step by
// step on the same host; for `bakeoff sim`, the sim's own performance model
// at its --sim-speed; else plan.AssumedPrior, from what the campaign says.

// simSteps is the wall time of a launch's steps on the machine running
// `bakeoff sim` beyond its load and its measured requests, s: stopping the
// old server, the GPU memory waits, the launch, the smoke request, the
// power sampler, the warm-up and the scrapes between levels, collecting,
// stopping, saving the log, and the orchestrator's own writes between two
// launches. On the 2-core machine, `make demo` spent 9.3, 14.5 and 9.7 s
// a launch on them (the median of 32 launches each) while other builds and
// tests shared its cores (load average 15 to 46), and about 3 s when it was
// quiet (a run of 30 launches in five minutes, about 10 s a launch, 7 s of
// them the requests): 6 s is within a factor of two of the quiet figure and
// of two of the three busy ones.
const simSteps = 6.0

// simVirtualSeed seeds the sim's noise when its model is run to cost a
// level: any fixed seed, so that an estimate does not move between calls.
const simVirtualSeed = 1

// priorFor is the planner's prior for campaign c, whose earlier runs are
// under root. Its noise is the host's noise profile under root when there
// is one (noise.Load), else assumed. Its costs: the load and the rest of a
// launch from the newest earlier run
// of c that completed a launch (any sweep), and the seconds per request from
// it too when it ran the same sweep; what an earlier run does not give
// comes from the sim's model when every scenario runs `bakeoff sim`, else
// from plan.AssumedPrior. Without an earlier run of c, the load is the one
// another campaign's newest run measured for c's models on c's host, when
// one did (hostLoad).
func priorFor(c *campaign.Campaign, root string) plan.Prior {
	p := costPrior(c, root)
	if key, ok := noiseKey(c); ok {
		if prof, err := noise.Load(root, key); err == nil && prof != nil {
			if v, df, runs, ok := prof.Pooled(); ok {
				p.RoundVar = v
				p.NoiseSource = fmt.Sprintf("the host's noise profile (%s: %s, %.0f df)", key, plural(len(runs), "run"), df)
			}
		}
	}
	return p
}

// costPrior is priorFor's costs.
func costPrior(c *campaign.Campaign, root string) plan.Prior {
	p, ok := simPrior(c)
	requests := fmt.Sprintf("the sim's model at its speed (%g×)", p.Speed)
	if !ok {
		p.Prior = plan.AssumedPrior(c)
		requests = fmt.Sprintf("assumed at %g tokens/s a stream", plan.AssumedStreamTokensPerSec)
	}
	run, ok := runPrior(c, root)
	if !ok {
		p.Source += fmt.Sprintf("; no earlier run in %s", filepath.Join(root, c.Name))
		if load, from, ok := hostLoad(c, root); ok {
			p.Load, p.Source = load, p.Source+"; the load from "+from
		}
		return p.Prior
	}
	p.Load, p.Overhead, p.Assumed = run.Load, run.Overhead, false
	p.Source = run.Source
	if len(run.PerRequest) > 0 {
		p.PerRequest = run.PerRequest
	} else {
		p.Source += "; it swept otherwise, so the requests' cost is " + requests
	}
	return p.Prior
}

// runPrior is the prior from the newest earlier run of campaign c under
// root with a completed launch: the median over its completed launches of
// their launch and ready steps (the load) and of the rest of their steps
// outside the measured requests; when the run swept as c sweeps, each
// level's median seconds per request. ok is false when there is no such
// run.
func runPrior(c *campaign.Campaign, root string) (p plan.Prior, ok bool) {
	runs, err := os.ReadDir(filepath.Join(root, c.Name))
	if err != nil {
		return p, false
	}
	// Run directories are named by their UTC start time: newest last.
	for i := len(runs) - 1; i >= 0; i-- {
		dir := filepath.Join(root, c.Name, runs[i].Name())
		run, err := results.ReadRun(dir)
		if err != nil {
			continue
		}
		var load, rest []float64
		per := map[measure.Level][]float64{}
		for _, sr := range run.Summary.Scenarios {
			if sr.Status != results.StatusOK || len(sr.PhaseSeconds) == 0 {
				continue
			}
			var total, ready, measured float64
			for step, s := range sr.PhaseSeconds {
				total += s
				if step == string(orchestrator.StepLaunch) || step == string(orchestrator.StepReady) {
					ready += s
				}
			}
			for _, l := range sr.Levels {
				measured += l.WallSeconds
				if l.Requests > 0 {
					per[l.Level] = append(per[l.Level], l.WallSeconds/float64(l.Requests))
				}
			}
			load = append(load, ready)
			rest = append(rest, max(total-ready-measured, 0))
		}
		if len(load) == 0 {
			continue
		}
		p = plan.Prior{Load: median(load), Overhead: median(rest) + betweenLaunches(dir, len(load)),
			Source: fmt.Sprintf("the run of %s in %s (%d launches)", run.Manifest.Started.UTC().Format(time.DateOnly), dir,
				len(load))}
		if c.SameSweep(run.Manifest.Fingerprint) {
			p.PerRequest = map[measure.Level]float64{}
			for lv, xs := range per {
				p.PerRequest[lv] = median(xs)
			}
		}
		return p, true
	}
	return p, false
}

// hostLoad is the load of campaign c's servers as the newest earlier run
// of another campaign under root measured it on the same host: the median
// of the launch and ready steps of its completed launches there (the host
// named as the run recorded it: local, or the SSH target) that served one
// of c's models, and a source naming the run. ok is false when none did.
func hostLoad(c *campaign.Campaign, root string) (load float64, source string, ok bool) {
	hosts := map[string]bool{}
	switch {
	case c.Host.Local:
		hosts["local"] = true
	case c.Host.Slurm != nil:
		return 0, "", false // the nodes are named by the allocation
	default:
		hosts[c.Host.SSH] = true
		for _, h := range c.Hosts {
			hosts[h.SSH] = true
		}
	}
	var dirs []string
	campaigns, _ := os.ReadDir(root)
	for _, d := range campaigns {
		runs, _ := os.ReadDir(filepath.Join(root, d.Name()))
		for _, r := range runs {
			dirs = append(dirs, filepath.Join(root, d.Name(), r.Name()))
		}
	}
	// Run directories are named by their UTC start time: newest first.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Compare(filepath.Base(b), filepath.Base(a)) })
	for _, dir := range dirs {
		run, err := results.ReadRun(dir)
		if err != nil || run.Manifest.Campaign == c.Name {
			continue
		}
		var loads []float64
		model := ""
		for _, sr := range run.Summary.Scenarios {
			if sr.Status != results.StatusOK || !hosts[sr.HostName] {
				continue
			}
			for _, sc := range c.Scenarios {
				if sc.Model != "" && strings.Contains(sr.Launch, sc.Model) {
					loads = append(loads, sr.PhaseSeconds[string(orchestrator.StepLaunch)]+sr.PhaseSeconds[string(orchestrator.StepReady)])
					model = sc.Model
					break
				}
			}
		}
		if len(loads) > 0 {
			return median(loads), fmt.Sprintf("the run of %s in %s (%d launches of %s on this host)",
				run.Manifest.Started.UTC().Format(time.DateOnly), dir, len(loads), model), true
		}
	}
	return 0, "", false
}

// betweenLaunches is the mean time of the run in dir outside its n
// completed launches' steps, per launch: the looks, the orchestrator's
// writes, a failed attempt. It comes from the run's journal, the first
// line to the last, less the launches' own time; 0 when the journal cannot
// be read.
func betweenLaunches(dir string, n int) float64 {
	entries, err := orchestrator.ReadJournal(filepath.Join(dir, results.JournalFile))
	if err != nil || len(entries) < 2 || n == 0 {
		return 0
	}
	var inside float64
	for _, e := range entries {
		if e.Phase == orchestrator.PhaseScenario && e.Event == "end" && e.Outcome == orchestrator.OutcomeOK {
			inside += e.DurationS
		}
	}
	span := entries[len(entries)-1].Time.Sub(entries[0].Time).Seconds()
	return max(span-inside, 0) / float64(n)
}

// simPrior is the prior of a campaign whose every scenario runs `bakeoff
// sim` (engine.command {bakeoff} sim): the load at its --sim-load-time
// over --sim-speed, the steps around it (simSteps), and each level's
// seconds per request from the sim's own performance model (model.RunVirtual
// on the scenario's command line, without its noise), the mean over the
// scenarios as the planner takes it. ok is false for any other engine.
func simPrior(c *campaign.Campaign) (simCost, bool) {
	s := c.Sweep
	if s.Sessions != nil || len(s.Speeds) > 0 || len(s.Rates) > 0 {
		return simCost{}, false // the model runs closed loops only
	}
	var cfgs []*cmdline.Config
	for _, sc := range c.Scenarios {
		l, err := campaign.Render(c, sc, campaign.On{})
		if err != nil || len(l.Argv) < 2 || l.Argv[0] != "{bakeoff}" || l.Argv[1] != "sim" {
			return simCost{}, false
		}
		cfg, err := cmdline.ParseArgs(l.Argv[2:], func(k string) string { return l.Env[k] })
		if err != nil || cfg.Sim.Speed <= 0 {
			return simCost{}, false
		}
		cfgs = append(cfgs, cfg)
	}
	if len(cfgs) == 0 {
		return simCost{}, false
	}
	speed := cfgs[0].Sim.Speed
	var load float64
	for _, cfg := range cfgs {
		load += cfg.Sim.LoadTime.Seconds() / cfg.Sim.Speed / float64(len(cfgs))
	}
	tokens := s.MaxTokens
	if mean, own := s.OutputTokens(); own {
		tokens = int(mean + 0.5)
	}
	prompt := promptTokens(s)
	p := simCost{Speed: speed, Prior: plan.Prior{Load: load, Overhead: simSteps, PerRequest: map[measure.Level]float64{},
		Source: fmt.Sprintf("the sim's model at its speed (%g×) and the campaign", speed)}}
	for _, lv := range s.Levels() {
		n := s.RequestsAt(lv)
		var sum float64
		for _, cfg := range cfgs {
			r := model.RunVirtualLaunch(cfg, model.ClosedLoop{Concurrency: lv.Concurrency, Requests: n, MaxTokens: tokens,
				PromptTokens: prompt}, simVirtualSeed, nil)
			sum += r.Makespan.Seconds() / cfg.Sim.Speed / float64(n)
		}
		p.PerRequest[lv] = sum / float64(len(cfgs))
	}
	// The warm-up's requests, one at a time, before the first level.
	if s.Warmup > 0 {
		r := model.RunVirtualLaunch(cfgs[0], model.ClosedLoop{Concurrency: 1, Requests: s.Warmup, MaxTokens: tokens,
			PromptTokens: prompt}, simVirtualSeed, nil)
		p.Overhead += r.Makespan.Seconds() / speed
	}
	return p, true
}

// simCost is a prior from the sim's model, with the sim's speed.
type simCost struct {
	plan.Prior
	Speed float64
}

// promptTokens is the mean prompt of the sweep's prompt set in tokens,
// as the sim counts words; 0 when the set cannot be read.
func promptTokens(s campaign.Sweep) int {
	set, err := s.PromptSet()
	if err != nil || len(set.Prompts) == 0 {
		return 0
	}
	words := 0
	for _, p := range set.Prompts {
		text := p.Text
		for _, m := range p.Messages {
			text += " " + m.Content
		}
		words += len(strings.Fields(text))
	}
	return prompts.WordsToTokens(words / len(set.Prompts))
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
