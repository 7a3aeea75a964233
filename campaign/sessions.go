package campaign

import (
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/prompts"
)

// workload decodes sweep.workload: what the simulated users do beyond
// sending independent prompts. Today that is multi-turn sessions.
func (d *doc) workload(v *yaml.Node, s *Sweep) {
	d.mapping(v, "sweep.workload", map[string]field{
		"sessions": func(_, v *yaml.Node) { s.Sessions = d.sessions(v) },
	})
}

// sessions decodes sweep.workload.sessions: {turns, think_time,
// first_prompt, follow_up}; nil when it is unusable.
func (d *doc) sessions(v *yaml.Node) *prompts.SessionSpec {
	const what = "sweep.workload.sessions"
	spec := &prompts.SessionSpec{Think: prompts.Dist{Kind: prompts.DistFixed}}
	ok, hasTurns := true, false
	source := func(p **prompts.Dist, name string) field {
		return func(_, v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && v.Value == prompts.FromPrompts && v.ShortTag() == "!!str" {
				*p = nil
				return
			}
			x, good := d.dist(v, what+"."+name)
			*p, ok = &x, ok && good
		}
	}
	d.mapping(v, what, map[string]field{
		"turns": func(_, v *yaml.Node) {
			var good bool
			hasTurns = true
			spec.Turns, good = d.dist(v, what+".turns")
			if good {
				if lo, hi := spec.Turns.Range(); lo < 1 || hi > prompts.MaxTurns {
					d.errorf(v, "%s.turns: %s: want 1 to %d turns (give a normal a max)", what, spec.Turns, prompts.MaxTurns)
					good = false
				}
			}
			ok = ok && good
		},
		"think_time": func(_, v *yaml.Node) {
			var good bool
			spec.Think, good = d.thinkDist(v, what+".think_time")
			ok = ok && good
		},
		"first_prompt": source(&spec.First, "first_prompt"),
		"follow_up":    source(&spec.FollowUp, "follow_up"),
	})
	if deref(v) == nil || deref(v).Kind != yaml.MappingNode {
		return nil
	}
	if !hasTurns {
		d.errorf(v, "%s: turns missing (the number of turns of a session, e.g. {dist: uniform, min: 2, max: 8})", what)
		return nil
	}
	if !ok {
		return nil
	}
	if err := spec.Check(); err != nil {
		d.errorf(v, "%s: %v", what, err)
		return nil
	}
	return spec
}

// thinkDist decodes a think time: a duration (fixed; 0s for none), or a
// distribution mapping {dist: fixed|uniform|normal, value, min, max, mean,
// sd} whose values are durations. It is kept in whole milliseconds.
func (d *doc) thinkDist(v *yaml.Node, what string) (prompts.Dist, bool) {
	ms := func(n *yaml.Node, name string) (float64, bool) {
		t, ok := d.duration(n, what+name)
		if !ok {
			return 0, false
		}
		if t < 0 {
			d.errorf(n, "%s%s: %s: must not be negative", what, name, n.Value)
			return 0, false
		}
		return float64(t) / float64(time.Millisecond), true
	}
	if v.Kind == yaml.ScalarNode {
		x, ok := ms(v, "")
		if !ok {
			return prompts.Dist{}, false
		}
		dist := prompts.Dist{Kind: prompts.DistFixed, Value: int(math.Round(x))}
		return dist, d.checkThink(v, what, dist)
	}
	x := prompts.Dist{}
	ok, hasKind := true, false
	whole := func(p *int, name string) field {
		return func(_, v *yaml.Node) {
			f, good := ms(v, "."+name)
			*p, ok = int(math.Round(f)), ok && good
		}
	}
	real := func(p *float64, name string) field {
		return func(_, v *yaml.Node) {
			f, good := ms(v, "."+name)
			*p, ok = f, ok && good
		}
	}
	d.mapping(v, what, map[string]field{
		"dist": func(_, v *yaml.Node) {
			x.Kind, hasKind = d.choice(v, what+".dist", prompts.DistFixed, prompts.DistUniform, prompts.DistNormal)
		},
		"value": whole(&x.Value, "value"),
		"min":   whole(&x.Min, "min"),
		"max":   whole(&x.Max, "max"),
		"mean":  real(&x.Mean, "mean"),
		"sd":    real(&x.SD, "sd"),
	})
	if deref(v) == nil || deref(v).Kind != yaml.MappingNode || !ok {
		return x, false
	}
	if !hasKind {
		d.errorf(v, "%s: dist missing (fixed, uniform or normal)", what)
		return x, false
	}
	return x, d.checkThink(v, what, x)
}

// checkThink reports a think time prompts.CheckThink refuses, at v.
func (d *doc) checkThink(v *yaml.Node, what string, x prompts.Dist) bool {
	if err := prompts.CheckThink(x); err != nil {
		d.errorf(v, "%s: %v", what, err)
		return false
	}
	return true
}
