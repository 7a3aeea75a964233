package campaign

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// ModeTrace is Sweep.Mode for a trace replay.
const ModeTrace = "trace"

// traceKey decodes sweep.trace: a path, or a mapping {file, block_size}.
func (d *doc) traceKey(v *yaml.Node, s *Sweep) {
	if v.Kind != yaml.MappingNode {
		if p, ok := d.word(v, "sweep.trace"); ok {
			if p == "" {
				d.errorf(v, "sweep.trace: empty (a JSONL trace file)")
			}
			s.Trace = p
		}
		return
	}
	d.mapping(v, "sweep.trace", map[string]field{
		"file": func(_, v *yaml.Node) {
			if p, ok := d.word(v, "sweep.trace.file"); ok {
				if p == "" {
					d.errorf(v, "sweep.trace.file: empty (a JSONL trace file)")
				}
				s.Trace = p
			}
		},
		"block_size": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "sweep.trace.block_size", 1); ok {
				if n > prompts.MaxBlockSize {
					d.errorf(v, "sweep.trace.block_size: %d is more than %d tokens", n, prompts.MaxBlockSize)
					return
				}
				s.BlockSize = n
			}
		},
	})
	if s.Trace == "" {
		d.errorf(v, "sweep.trace: file missing (a JSONL trace file)")
	}
}

// speeds decodes sweep.speeds: distinct replay speeds, positive, in
// thousandths at most.
func (d *doc) speeds(v *yaml.Node) []float64 {
	return distinctList(d, v, "sweep.speeds", "speeds (multiples of the trace's recorded pace)", "speed",
		func(r *yaml.Node, what string) (float64, measure.Level, string, bool) {
			f, ok := d.number(r, what)
			if !ok {
				return 0, measure.Level{}, "", false
			}
			key := measure.SpeedLevel(f)
			switch {
			case !(f > 0):
				d.errorf(r, "%s: speed %g: must be more than 0", what, f)
			case f > measure.MaxSpeed:
				d.errorf(r, "%s: speed %g: more than %d times the trace's pace", what, f, measure.MaxSpeed)
			case math.Abs(key.Speed-f) > 1e-9*f:
				d.errorf(r, "%s: speed %g: at most three decimals", what, f)
			default:
				return f, key, fmt.Sprintf("speed %g", f), true
			}
			return 0, measure.Level{}, "", false
		})
}

// trace reads the sweep's trace, checks it row by row (a malformed row is
// reported at sweep.trace with the trace's own file:line) and keeps it and
// its content hash. The path is stored absolute, as a prompt file's is.
func (l *loader) trace(c *Campaign, d *doc, at position, node *yaml.Node) {
	s := &c.Sweep
	if node != nil && len(s.Speeds) == 0 {
		d.errorf(node, "sweep.trace: a trace is replayed at sweep.speeds (e.g. [0.5, 1, 2]); give them instead of sweep.concurrency or sweep.rates")
	}
	if s.Trace == "" {
		return
	}
	if s.UniquePrompts {
		l.p.errorf(at, "sweep.unique_prompts: a trace's shared prefixes are what it replays; unique prompts would remove them")
	}
	if s.Synthetic != nil || (s.Prompts != "" && s.Prompts != promptBuiltin) {
		l.p.errorf(at, "sweep.trace: the trace gives the prompts; leave sweep.prompts out")
	}
	path := s.Trace
	if !filepath.IsAbs(path) {
		path = filepath.Clean(filepath.Join(filepath.Dir(c.File), path))
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s.Trace = path
	data, err := l.read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.p.errorf(at, "sweep.trace: %s does not exist", path)
		return
	case err != nil:
		l.p.errorf(at, "sweep.trace: reading %s: %s", path, readMsg(err))
		return
	}
	t, err := prompts.ParseTrace(path, data, s.BlockSize)
	if err != nil {
		l.p.errorf(at, "sweep.trace: %v", err)
		return
	}
	c.Trace, s.TraceHash, s.TraceRows, s.TraceSpan = t, t.Hash, len(t.Rows), t.Duration()
	for _, r := range t.Rows {
		s.TraceOutput += r.Output
		if r.Output == 0 {
			s.TraceUnsized++
		}
	}
	if s.BlockSize == 0 {
		s.BlockSize = t.BlockSize
	}
}

// AsksLengths reports whether the sweep's prompts ask for lengths in
// tokens: a synthetic set's input lengths, a Mooncake trace's
// input_length.
func (s Sweep) AsksLengths(t *prompts.Trace) bool {
	return s.Synthetic != nil || (t != nil && t.Hashed())
}

// InputLengths says, for each engine of the campaign's scenarios, how its
// prompts are made their length in tokens (engine.Profile.Lengths); nil
// when the sweep asks for no lengths.
func (c *Campaign) InputLengths() map[string]string {
	if !c.Sweep.AsksLengths(c.Trace) {
		return nil
	}
	out := map[string]string{}
	for _, sc := range c.Scenarios {
		if p := engine.Lookup(sc.Engine); p != nil {
			out[p.Name] = p.Lengths(c.Sweep.Endpoint == EndpointCompletions)
		}
	}
	return out
}

// SentPromptSet is the hash every record of the campaign names as its
// prompt set (measure.Record.PromptSet): the trace's when it replays one,
// whose rows are the prompts, else the prompt set's. The verdict checks the
// records against it.
func (c *Campaign) SentPromptSet() string {
	if c.Trace != nil {
		return c.Trace.Hash
	}
	return c.PromptHash
}
