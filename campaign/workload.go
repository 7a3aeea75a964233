package campaign

import (
	"errors"
	"io/fs"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/prompts"
)

// PromptSpec is what makes the sweep's prompt set (prompts.Make with the
// sweep's seed).
func (s Sweep) PromptSpec() prompts.Spec {
	out := prompts.Spec{File: s.Prompts, Synthetic: s.Synthetic}
	if s.OutputLengths != prompts.OutputMaxTokens {
		out.OutputLengths = s.OutputLengths
	}
	return out
}

// PromptSet builds the sweep's prompt set, reading a file from disk.
func (s Sweep) PromptSet() (*prompts.Set, error) {
	return prompts.Make(s.PromptSpec(), s.Seed, nil)
}

// OutputTokens is how many tokens a request of the sweep asks for, on
// average, and whether the prompts ask for their own lengths (a trace's
// rows, recorded output lengths, a synthetic set) rather than each for
// max_tokens. A prompt set that cannot be read counts as max_tokens each.
func (s Sweep) OutputTokens() (mean float64, own bool) {
	if s.TraceRows > 0 {
		return float64(s.TraceOutput+s.TraceUnsized*s.MaxTokens) / float64(s.TraceRows), s.TraceUnsized < s.TraceRows
	}
	if s.Synthetic == nil && s.OutputLengths != prompts.OutputRecorded {
		return float64(s.MaxTokens), false
	}
	set, err := s.PromptSet()
	if err != nil {
		return float64(s.MaxTokens), false
	}
	return set.MeanMaxTokens(s.MaxTokens), true
}

// promptsKey decodes sweep.prompts: `builtin` or a path, or a mapping
// {file, output_lengths} or {synthetic: {count, input_tokens, output_tokens}}.
func (d *doc) promptsKey(v *yaml.Node, s *Sweep) {
	if v.Kind != yaml.MappingNode {
		if p, ok := d.word(v, "sweep.prompts"); ok {
			if p == "" {
				d.errorf(v, "sweep.prompts: empty (use builtin or a JSONL file)")
				return
			}
			s.Prompts = p
		}
		return
	}
	var fileAt, lengthsAt *yaml.Node
	d.mapping(v, "sweep.prompts", map[string]field{
		"file": func(_, v *yaml.Node) {
			fileAt = v
			if p, ok := d.word(v, "sweep.prompts.file"); ok {
				if p == "" {
					d.errorf(v, "sweep.prompts.file: empty (use builtin or a JSONL file)")
					return
				}
				s.Prompts = p
			}
		},
		"output_lengths": func(_, v *yaml.Node) {
			lengthsAt = v
			if m, ok := d.choice(v, "sweep.prompts.output_lengths", prompts.OutputMaxTokens, prompts.OutputRecorded); ok {
				s.OutputLengths = m
			}
		},
		"synthetic": func(_, v *yaml.Node) { s.Synthetic = d.synthetic(v) },
	})
	if s.Synthetic != nil {
		if fileAt != nil {
			d.errorf(fileAt, "sweep.prompts.file: a synthetic set is cut from the built-in text; give file or synthetic, not both")
		}
		if lengthsAt != nil {
			d.errorf(lengthsAt, "sweep.prompts.output_lengths: a synthetic set always asks for its drawn output lengths")
		}
	}
}

// synthetic decodes sweep.prompts.synthetic; nil when it is unusable.
func (d *doc) synthetic(v *yaml.Node) *prompts.SyntheticSpec {
	spec := &prompts.SyntheticSpec{Count: prompts.DefaultSyntheticCount}
	ok := true
	var hasIn, hasOut bool
	d.mapping(v, "sweep.prompts.synthetic", map[string]field{
		"count": func(_, v *yaml.Node) {
			n, good := d.intAtLeast(v, "sweep.prompts.synthetic.count", 1)
			if good && n > prompts.MaxSyntheticCount {
				d.errorf(v, "sweep.prompts.synthetic.count: %d is more than %d", n, prompts.MaxSyntheticCount)
				good = false
			}
			spec.Count, ok = n, ok && good
		},
		"input_tokens": func(_, v *yaml.Node) {
			var good bool
			hasIn = true
			spec.Input, good = d.dist(v, "sweep.prompts.synthetic.input_tokens")
			ok = ok && good
		},
		"output_tokens": func(_, v *yaml.Node) {
			var good bool
			hasOut = true
			spec.Output, good = d.dist(v, "sweep.prompts.synthetic.output_tokens")
			ok = ok && good
		},
	})
	if v.Kind != yaml.MappingNode {
		return nil
	}
	if !hasIn {
		d.errorf(v, "sweep.prompts.synthetic: input_tokens missing (the prompt length distribution)")
	}
	if !hasOut {
		d.errorf(v, "sweep.prompts.synthetic: output_tokens missing (the max_tokens distribution)")
	}
	if !ok || !hasIn || !hasOut {
		return nil
	}
	return spec
}

// dist decodes a length distribution: a number (fixed), the text form
// prompts.ParseDist reads, or a mapping {dist: fixed|uniform|normal, value,
// min, max, mean, sd}.
func (d *doc) dist(v *yaml.Node, what string) (prompts.Dist, bool) {
	if v.Kind == yaml.ScalarNode && !isNull(v) {
		x, err := prompts.ParseDist(v.Value)
		if err != nil {
			d.errorf(v, "%s: %v", what, err)
			return x, false
		}
		return x, true
	}
	var x prompts.Dist
	hasKind := false
	intField := func(p *int, name string) field {
		return func(_, v *yaml.Node) { *p, _ = d.intAtLeast(v, what+"."+name, 0) }
	}
	floatField := func(p *float64, name string) field {
		return func(_, v *yaml.Node) { *p, _ = d.number(v, what+"."+name) }
	}
	d.mapping(v, what, map[string]field{
		"dist": func(_, v *yaml.Node) {
			x.Kind, hasKind = d.choice(v, what+".dist", prompts.DistFixed, prompts.DistUniform, prompts.DistNormal)
		},
		"value": intField(&x.Value, "value"),
		"min":   intField(&x.Min, "min"),
		"max":   intField(&x.Max, "max"),
		"mean":  floatField(&x.Mean, "mean"),
		"sd":    floatField(&x.SD, "sd"),
	})
	if v.Kind != yaml.MappingNode {
		return x, false
	}
	if !hasKind {
		d.errorf(v, "%s: dist missing (fixed, uniform or normal)", what)
		return x, false
	}
	// Round-trip through the text form, so both spellings are checked
	// (and normalised) by one parser.
	y, err := prompts.ParseDist(x.String())
	if err == nil {
		err = x.Check()
	}
	if err != nil {
		d.errorf(v, "%s: %v", what, err)
		return y, false
	}
	return y, true
}

// prompts builds the sweep's prompt set and records its content hash; a
// missing or malformed file is reported at sweep.prompts. A JSONL path is
// stored absolute, so prompts.Make finds the same file from any directory;
// messages keep the short form.
func (l *loader) prompts(c *Campaign, at position) {
	if c.Sweep.Prompts != promptBuiltin {
		path := c.Sweep.Prompts
		if !filepath.IsAbs(path) {
			path = filepath.Clean(filepath.Join(filepath.Dir(c.File), path))
		}
		c.Sweep.Prompts = path
		if abs, err := filepath.Abs(path); err == nil {
			c.Sweep.Prompts = abs
		}
		spec := c.Sweep.PromptSpec()
		spec.File = path
		var readErr error
		set, err := prompts.Make(spec, c.Sweep.Seed, func(p string) ([]byte, error) {
			data, err := l.read(p)
			readErr = err
			return data, err
		})
		switch {
		case errors.Is(readErr, fs.ErrNotExist):
			l.p.errorf(at, "sweep.prompts: %s does not exist (use `builtin` or a JSONL file)", path)
		case readErr != nil:
			l.p.errorf(at, "sweep.prompts: reading %s: %s", path, readMsg(readErr))
		case err != nil:
			l.p.errorf(at, "sweep.prompts: %v", err)
		default:
			l.promptsFound(c, set, at)
		}
		return
	}
	set, err := prompts.Make(c.Sweep.PromptSpec(), c.Sweep.Seed, l.read)
	if err != nil {
		l.p.errorf(at, "sweep.prompts: %v", err)
		return
	}
	l.promptsFound(c, set, at)
}

// promptsFound keeps the set's hash and warns about recorded output lengths
// that are missing or that the server may cut short.
func (l *loader) promptsFound(c *Campaign, set *prompts.Set, at position) {
	c.PromptHash = set.Hash
	perRequest := c.Sweep.OutputLengths == prompts.OutputRecorded || c.Sweep.Synthetic != nil
	if c.Sweep.OutputLengths == prompts.OutputRecorded {
		if n := set.Unrecorded(); n == len(set.Prompts) {
			l.p.warnf(at, "sweep.prompts.output_lengths: recorded, but no prompt records an output length (output_tokens, or a ShareGPT answer): every request asks for max_tokens %d", c.Sweep.MaxTokens)
		} else if n > 0 {
			l.p.warnf(at, "sweep.prompts.output_lengths: %d of %d prompts record no output length; they ask for max_tokens %d", n, len(set.Prompts), c.Sweep.MaxTokens)
		}
	}
	if perRequest && !c.Sweep.IgnoreEOS {
		l.p.warnf(at, "sweep.prompts: per-request output lengths with ignore_eos false: a model that stops early generates less than asked, and the lengths then depend on the scenario")
	}
}
