package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// powerRun is the GPU power sampler of one scenario attempt.
type powerRun struct {
	source string // remote.PowerNvidiaSMI or remote.PowerDCGM
	raw    string // the sampler's output on the host
}

// powerPID is the sampler's pid file: one sampler per host, like the server.
func (w *worker) powerPID() string { return path.Join(w.paths.workdir, "power.pid") }

// startPower starts the GPU power sampler detached on the host, beside the
// sweep: its own process group, its output in a file, so that a dropped link
// loses no reading. It never fails the scenario: energy is a figure beside
// the measurement, not a condition of it.
func startPower(ctx context.Context, s *scenarioRun) error {
	o := s.o
	if o.c.Power.Source == campaign.PowerOff || o.c.LaunchesPerHost > 1 {
		// A sampler reads every GPU of the host: beside launches in other
		// slots, its energy would be theirs too.
		return nil
	}
	// A sampler left by a killed orchestrator would write into another
	// launch's file.
	if err := s.stopOverLink(ctx, s.w.powerPID()); err != nil {
		o.warn(s.sc.Name, fmt.Sprintf("stopping an old power sampler on %s: %v", s.w.h.Name(), err))
		return nil
	}
	p := &powerRun{source: remote.PowerNvidiaSMI, raw: s.sweepDir + "-" + results.PowerLogFile}
	if o.c.Power.Source == campaign.PowerDCGM {
		has, err := remote.HasCommand(ctx, s.w.h, remote.DefaultDCGMI)
		switch {
		case err != nil:
			o.warn(s.sc.Name, fmt.Sprintf("%v; sampling power with nvidia-smi", err))
		case has:
			p.source = remote.PowerDCGM
		default:
			o.warn(s.sc.Name, fmt.Sprintf("power.source is dcgm but %s has no %s; sampling power with nvidia-smi", s.w.h.Name(), remote.DefaultDCGMI))
		}
	}
	cmd := remote.PowerSamplerCommand(p.source, o.c.GPU.NvidiaSMI, o.c.Power.Interval)
	// The file is the user's only, as the other results (umask 077).
	prep := "umask 077 && mkdir -p " + campaign.ShellQuote(path.Dir(p.raw)) + " && rm -f " + campaign.ShellQuote(p.raw)
	err := s.w.overLink(ctx, s.sc.Name, "preparing the power sampler", func(ctx context.Context) error {
		_, _, err := s.w.h.Run(ctx, prep)
		return err
	})
	if err == nil {
		err = s.w.startOverLink(ctx, s.sc.Name, remote.ProcessSpec{Command: "umask 077; " + cmd, Dir: s.w.paths.workdir,
			LogFile: p.raw, PIDFile: s.w.powerPID()})
	}
	if err != nil {
		o.warn(s.sc.Name, fmt.Sprintf("starting the power sampler on %s: %v; no energy figures for this launch", s.w.h.Name(), err))
		return nil
	}
	s.power = p
	return nil
}

// stopPower stops the sampler, downloads its readings and adds each level's
// mean power and energy per 1000 tokens to the result and levels.json.
func stopPower(ctx context.Context, s *scenarioRun) error {
	o := s.o
	if s.power == nil || s.w.unreachable {
		return nil // a lost host's readings are lost with it
	}
	if err := s.stopOverLink(ctx, s.w.powerPID()); err != nil {
		return fmt.Errorf("stopping the power sampler on %s: %w", s.w.h.Name(), err)
	}
	if err := os.MkdirAll(s.dir, results.DirMode); err != nil {
		return err
	}
	raw := filepath.Join(s.dir, results.PowerLogFile)
	err := s.w.overLink(ctx, s.sc.Name, "downloading the power readings", func(ctx context.Context) error {
		return s.w.h.Download(ctx, s.power.raw, raw)
	})
	if err != nil {
		return fmt.Errorf("downloading the power readings %s from %s: %w", s.power.raw, s.w.h.Name(), err)
	}
	setResultMode(raw)
	data, err := os.ReadFile(raw)
	if err != nil {
		return err
	}
	log, bad, err := powerLog(data, s.power.source, o.c.Power.Interval.Milliseconds(), o.c.GPU.MaxUsedMiB)
	if err != nil {
		o.warn(s.sc.Name, fmt.Sprintf("reading the power readings of %s: %v", s.sc.Name, err))
	}
	if bad > 0 {
		o.warn(s.sc.Name, fmt.Sprintf("%d line(s) of the power readings could not be read (see %s)", bad, results.PowerLogFile))
	}
	if err := results.WriteJSONAtomic(filepath.Join(s.dir, results.PowerFile), log); err != nil {
		return err
	}
	if log.Unavailable != "" {
		return nil // the verdict's notes say so, once
	}
	for i := range s.result.Levels {
		if err := s.result.Levels[i].SetEnergy(log); err != nil {
			o.warn(s.sc.Name, "energy: "+err.Error())
		}
	}
	if len(s.result.Levels) > 0 {
		return results.WriteJSONAtomic(filepath.Join(s.dir, results.LevelsFile), s.result.Levels)
	}
	return nil
}

// powerLog parses a sampler's output and decides which GPUs count: those
// whose memory rose above maxUsedMiB while it ran. Before the launch the
// GPU wait saw every GPU at or under that, so memory above it is this
// server's. Memory, not CUDA_VISIBLE_DEVICES, decides: CUDA numbers devices
// fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi by PCI bus,
// so the same index can name two different boards.
func powerLog(data []byte, source string, intervalMs int64, maxUsedMiB int) (measure.PowerLog, int, error) {
	log := measure.PowerLog{Source: source, IntervalMs: int(intervalMs), Samples: []measure.PowerSample{}}
	parse := remote.ParsePowerSMI
	if source == remote.PowerDCGM {
		parse = remote.ParsePowerDCGM
	}
	samples, bad, err := parse(data)
	if err != nil || len(samples) == 0 {
		log.Unavailable = "the power sampler took no reading"
		if err != nil {
			log.Unavailable = err.Error()
		}
		return log, bad, err
	}
	log.Samples = samples
	all := map[int]bool{}
	used := map[int]bool{}
	memKnown := false
	for _, s := range samples {
		all[s.GPU] = true
		if s.MemMiB >= 0 {
			memKnown = true
			if s.MemMiB > maxUsedMiB {
				used[s.GPU] = true
			}
		}
	}
	switch {
	case len(used) > 0:
		log.GPUs = slices.Sorted(maps.Keys(used))
		log.GPUsFrom = fmt.Sprintf("memory used above %d MiB while the sweep ran", maxUsedMiB)
	case memKnown:
		log.GPUs = slices.Sorted(maps.Keys(all))
		log.GPUsFrom = fmt.Sprintf("every GPU: none held more than %d MiB while the sweep ran", maxUsedMiB)
	default:
		log.GPUs = slices.Sorted(maps.Keys(all))
		log.GPUsFrom = "every GPU: memory.used is not reported"
	}
	reported := false
	for _, s := range samples {
		if s.PowerW >= 0 && slices.Contains(log.GPUs, s.GPU) {
			reported = true
			break
		}
	}
	if !reported {
		log.Unavailable = fmt.Sprintf("%s reports no power draw for GPU %s ([N/A])", source, joinInts(log.GPUs))
	}
	return log, bad, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
