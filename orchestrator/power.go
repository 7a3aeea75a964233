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

// powerRun is the GPU power samplers of one scenario attempt: one on each
// host the launch runs on, the launch's own host first.
type powerRun struct {
	nodes []powerNode
}

// powerNode is the sampler on one host of the launch.
type powerNode struct {
	w      *worker
	source string // remote.PowerNvidiaSMI or remote.PowerDCGM
	raw    string // the sampler's output on the host
}

// powerPID is the sampler's pid file: one sampler per host, like the server.
func (w *worker) powerPID() string { return path.Join(w.paths.workdir, "power.pid") }

// powerHosts are the hosts a launch's instances run on, its own first: a
// deployment over several nodes draws power on each, and a node of the
// group it does not use is left out (its idle GPUs are not the launch's).
func (s *scenarioRun) powerHosts() []*worker {
	out := []*worker{s.w}
	if s.dep != nil {
		for _, p := range s.dep.procs {
			if p.node != nil && !slices.Contains(out, p.node) {
				out = append(out, p.node)
			}
		}
	}
	return out
}

// startPower starts the GPU power sampler detached on each host of the
// launch, beside the sweep: its own process group, its output in a file, so
// that a dropped link loses no reading. It never fails the scenario: energy
// is a figure beside the measurement, not a condition of it; a host whose
// sampler cannot start leaves the launch without energy, since the others'
// alone would read as the whole deployment's.
func startPower(ctx context.Context, s *scenarioRun) error {
	o := s.o
	if o.c.Power.Source == campaign.PowerOff || o.c.LaunchesPerHost > 1 {
		// A sampler reads every GPU of the host: beside launches in other
		// slots, its energy would be theirs too.
		return nil
	}
	p := &powerRun{}
	for k, w := range s.powerHosts() {
		raw := s.sweepDir + "-" + results.PowerLogFile
		if k > 0 {
			raw = path.Join(w.paths.sweeps, s.sc.Name+"-"+results.PowerLogFile)
		}
		n, ok := s.startPowerOn(ctx, w, raw)
		if !ok {
			for _, started := range p.nodes {
				if err := s.stopOn(ctx, started.w, started.w.powerPID()); err != nil {
					started.w.warn(s.sc.Name, fmt.Sprintf("stopping the power sampler on %s: %v", started.w.h.Name(), err))
				}
			}
			return nil
		}
		p.nodes = append(p.nodes, n)
	}
	s.power = p
	return nil
}

// startPowerOn starts one host's sampler, its output in raw; false, with a
// warning, when it could not.
func (s *scenarioRun) startPowerOn(ctx context.Context, w *worker, raw string) (powerNode, bool) {
	o := s.o
	// A sampler left by a killed orchestrator would write into another
	// launch's file.
	if err := s.stopOn(ctx, w, w.powerPID()); err != nil {
		w.warn(s.sc.Name, fmt.Sprintf("stopping an old power sampler on %s: %v; no energy figures for this launch", w.h.Name(), err))
		return powerNode{}, false
	}
	n := powerNode{w: w, source: remote.PowerNvidiaSMI, raw: raw}
	if o.c.Power.Source == campaign.PowerDCGM {
		has, err := remote.HasCommand(ctx, w.h, remote.DefaultDCGMI)
		switch {
		case err != nil:
			w.warn(s.sc.Name, fmt.Sprintf("%v; sampling power with nvidia-smi", err))
		case has:
			n.source = remote.PowerDCGM
		default:
			w.warn(s.sc.Name, fmt.Sprintf("power.source is dcgm but %s has no %s; sampling power with nvidia-smi", w.h.Name(), remote.DefaultDCGMI))
		}
	}
	cmd := remote.PowerSamplerCommand(n.source, o.c.GPU.NvidiaSMI, o.c.Power.Interval)
	// The file is the user's only, as the other results (umask 077).
	prep := "umask 077 && mkdir -p " + campaign.ShellQuote(path.Dir(raw)) + " && rm -f " + campaign.ShellQuote(raw)
	err := w.overLink(ctx, s.sc.Name, "preparing the power sampler", func(ctx context.Context) error {
		_, _, err := w.h.Run(ctx, prep)
		return err
	})
	if err == nil {
		err = w.startOverLink(ctx, s.sc.Name, remote.ProcessSpec{Command: "umask 077; " + cmd, Dir: w.paths.workdir,
			LogFile: raw, PIDFile: w.powerPID()})
	}
	if err != nil {
		w.warn(s.sc.Name, fmt.Sprintf("starting the power sampler on %s: %v; no energy figures for this launch", w.h.Name(), err))
		return powerNode{}, false
	}
	return n, true
}

// stopPower stops the samplers, downloads their readings and adds each
// level's mean power and energy per 1000 tokens, over every host's GPUs, to
// the result and levels.json. The launch's own host's readings are
// power.log and power.json; another node's are power-HOST.log, and its log
// is one of power.json's nodes.
func stopPower(ctx context.Context, s *scenarioRun) error {
	if s.power == nil {
		return nil
	}
	for _, n := range s.power.nodes {
		if n.w.unreachable {
			return nil // a lost host's readings are lost with it, and the launch's energy with them
		}
	}
	if err := os.MkdirAll(s.dir, results.DirMode); err != nil {
		return err
	}
	var log measure.PowerLog
	for k, n := range s.power.nodes {
		name := results.PowerLogFile
		if k > 0 {
			name = "power-" + safeName(n.w.h.Name()) + ".log"
		}
		l, err := s.readPower(ctx, n, filepath.Join(s.dir, name))
		if err != nil {
			return err
		}
		if k == 0 {
			log = l
			continue
		}
		l.Host = n.w.h.Name()
		log.Nodes = append(log.Nodes, l)
	}
	if err := results.WriteJSONAtomic(filepath.Join(s.dir, results.PowerFile), log); err != nil {
		return err
	}
	if log.Unavailable != "" {
		return nil // the verdict's notes say so, once
	}
	for i := range s.result.Levels {
		if err := s.result.Levels[i].SetEnergy(log); err != nil {
			s.warn("energy: " + err.Error())
		}
	}
	if len(s.result.Levels) > 0 {
		return results.WriteJSONAtomic(filepath.Join(s.dir, results.LevelsFile), s.result.Levels)
	}
	return nil
}

// readPower stops one host's sampler, downloads its output to raw and
// parses it.
func (s *scenarioRun) readPower(ctx context.Context, n powerNode, raw string) (measure.PowerLog, error) {
	o := s.o
	if err := s.stopOn(ctx, n.w, n.w.powerPID()); err != nil {
		return measure.PowerLog{}, fmt.Errorf("stopping the power sampler on %s: %w", n.w.h.Name(), err)
	}
	err := n.w.overLink(ctx, s.sc.Name, "downloading the power readings", func(ctx context.Context) error {
		return n.w.h.Download(ctx, n.raw, raw)
	})
	if err != nil {
		return measure.PowerLog{}, fmt.Errorf("downloading the power readings %s from %s: %w", n.raw, n.w.h.Name(), err)
	}
	setResultMode(raw)
	data, err := os.ReadFile(raw)
	if err != nil {
		return measure.PowerLog{}, err
	}
	log, bad, err := powerLog(data, n.source, o.c.Power.Interval.Milliseconds(), o.c.GPU.MaxUsedMiB)
	if err != nil {
		n.w.warn(s.sc.Name, fmt.Sprintf("reading the power readings of %s on %s: %v", s.sc.Name, n.w.h.Name(), err))
	}
	if bad > 0 {
		n.w.warn(s.sc.Name, fmt.Sprintf("%d line(s) of the power readings on %s could not be read (see %s)", bad, n.w.h.Name(), filepath.Base(raw)))
	}
	return log, nil
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

// safeName is a host's name as a file name: every byte outside letters,
// digits, dot, dash and underscore (a user@, a port's colon, a slot's
// slash) made an underscore.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
