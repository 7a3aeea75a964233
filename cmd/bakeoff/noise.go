package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/noise"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// noiseKey is whose noise a campaign measures: its host, its baseline's
// engine and model, under its sweep. Only a campaign on one host has one: a fleet's or a
// Slurm allocation's rounds run on machines that each have their own.
func noiseKey(c *campaign.Campaign) (noise.Key, bool) {
	if len(c.Hosts) > 0 || c.Host.Slurm != nil {
		return noise.Key{}, false
	}
	host := "local"
	if !c.Host.Local {
		host = c.Host.SSH
	}
	for _, s := range c.Scenarios {
		if s.Name == c.Baseline {
			fp := c.Fingerprint()
			return noise.Key{Host: host, Engine: cmp.Or(s.Engine, campaign.DefaultEngine), Model: s.Model,
				Sweep: fp[:min(len(fp), len("sha256:")+12)]}, true
		}
	}
	return noise.Key{}, false
}

// noisePrior is the host's noise profile under the results root, as the
// prior the run starts with; nil without one (a first run there, a fleet),
// or when it cannot be read, which w is told.
func noisePrior(w io.Writer, c *campaign.Campaign, root string) *results.NoisePrior {
	key, ok := noiseKey(c)
	if !ok {
		return nil
	}
	p, err := noise.Load(root, key)
	if err != nil {
		fmt.Fprintf(w, "warning: %v; the run starts without the host's noise profile\n", err)
		return nil
	}
	if p == nil {
		return nil
	}
	v, df, runs, ok := p.Pooled()
	if !ok {
		return nil
	}
	return &results.NoisePrior{Var: v, DF: df, Source: key.String(), Runs: runs}
}

// recordNoise adds what the run in runDir measured of the noise to the
// host's profile under the results root; a failure to write it is told to
// w and loses nothing of the run.
func recordNoise(w io.Writer, c *campaign.Campaign, root, runDir string, v *verdict.Verdict) {
	key, ok := noiseKey(c)
	if !ok || v == nil || v.Noise == nil || !(v.Noise.DF > 0) {
		return
	}
	run, err := results.ReadRun(runDir)
	if err != nil {
		fmt.Fprintf(w, "warning: the host's noise profile was not updated: %v\n", err)
		return
	}
	name := runDir
	if rel, err := filepath.Rel(root, runDir); err == nil {
		name = filepath.ToSlash(rel)
	}
	o := noise.Observation{Run: name, At: run.Manifest.Started, Var: v.Noise.Var, DF: v.Noise.DF}
	for _, l := range v.Noise.Levels {
		o.Levels = append(o.Levels, noise.Level{Level: l.Level.String(), SDPct: l.SDPct, DF: l.DF})
	}
	if err := noise.Record(root, key, o); err != nil {
		fmt.Fprintf(w, "warning: the host's noise profile was not updated: %v\n", err)
	}
}
