package campaign

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"
)

// spaceOverlaps refuses a flag or a variable that a scenario file sets
// both in its args or env and as an axis of its space, or of the space it
// inherits: which of the two a point gets would be a guess. A parent's
// value is overridden by the axis, as a parent's args are by a child's.
func (l *loader) spaceOverlaps(sp *space, raw *rawScenario) {
	if sp == nil {
		return
	}
	whose := fmt.Sprintf("an axis of the space it inherits (%s)", sp.at)
	if raw.hasSpace {
		whose = fmt.Sprintf("also an axis of its space (line %d)", sp.at.line)
	}
	for _, a := range raw.args {
		if sp.axis(a.arg.Key, false) != nil {
			l.p.errorf(a.at, "args.%s: %s; a point takes its value from the space, so set it in one place", a.arg.Key, whose)
		}
	}
	for _, v := range raw.env {
		if sp.axis(v.name, true) != nil {
			l.p.errorf(v.at, "env.%s: %s; a point takes its value from the space, so set it in one place", v.name, whose)
		}
	}
}

// axis is the space's axis over a flag (env false) or a variable.
func (sp *space) axis(name string, env bool) *spaceAxis {
	for _, ax := range sp.axes {
		if ax.name == name && ax.env == env {
			return ax
		}
	}
	return nil
}

// expandSpace turns a scenario with a space into its points, in grid order
// (the first axis slowest), each a scenario not yet finished. Nil when the
// space is refused: its base does not check, a role would override an
// axis, a constraint fails at a point, no point is left, or too many are.
func (l *loader) expandSpace(c *Campaign, base *Scenario) []*Scenario {
	sp := base.space
	before := len(l.p.errs)
	// The base is checked once, so that what is wrong with it is said once
	// rather than at every point.
	l.finish(base.clone())
	l.roleOverlaps(base, sp)
	if len(l.p.errs) > before {
		return nil
	}
	total := 1
	for _, ax := range sp.axes {
		total *= len(ax.values)
		if total > MaxSpaceCombinations {
			l.p.errorf(sp.at, "space: %s has %s combinations (%s), more than the %s a space is checked over; use a coarser grid",
				base.Name, gridCount(sp.axes), gridShape(sp.axes), thousands(MaxSpaceCombinations))
			return nil
		}
	}
	dropped := make([]int, len(sp.rules))
	var kept [][]int
	vars := make(map[string]any, len(sp.axes))
	idx := make([]int, len(sp.axes))
	var machine vm.VM
	for n := range total {
		for i, rest := len(sp.axes)-1, n; i >= 0; i-- {
			idx[i] = rest % len(sp.axes[i].values)
			rest /= len(sp.axes[i].values)
			vars[sp.axes[i].ident] = sp.axes[i].values[idx[i]].val
		}
		drop := -1
		for ri, r := range sp.rules {
			keep, err := r.keeps(&machine, vars, idx)
			if err != nil {
				l.p.errorf(r.at, "%s: at %s: %v", r.what, pointName(base.Name, sp.axes, idx), err)
				return nil
			}
			if !keep {
				drop = ri
				break
			}
		}
		if drop >= 0 {
			dropped[drop]++
			continue
		}
		kept = append(kept, slices.Clone(idx))
	}
	switch {
	case len(kept) == 0:
		l.p.errorf(sp.at, "space: %s keeps no point of its %s: %s", base.Name,
			plural(total, "combination"), dropList(sp.rules, dropped))
		return nil
	case len(kept) > MaxSpacePoints:
		of := ""
		if len(kept) < total {
			of = fmt.Sprintf(" (of %s combinations)", thousands(total))
		}
		l.p.errorf(sp.at, "space: %s expands to %s points%s, more than the %d one space may launch (each point is a launch in every round); add constraints or use a coarser grid",
			base.Name, thousands(len(kept)), of, MaxSpacePoints)
		return nil
	}
	for ri, r := range sp.rules {
		if dropped[ri] == 0 {
			l.p.warnf(r.at, "%s: drops nothing in %s: no combination the rules before it keep is dropped by it", r.what, base.Name)
		}
	}
	points := make([]*Scenario, 0, len(kept))
	named := map[string][]int{}
	for _, ix := range kept {
		p := base.point(sp, ix)
		if first, dup := named[p.Name]; dup {
			l.p.errorf(sp.at, "space: two points of %s are both named %s (%s and %s); give the axes labels that tell them apart",
				base.Name, p.Name, assignment(sp.axes, first), assignment(sp.axes, ix))
			return nil
		}
		if !validName(p.Name) {
			l.p.errorf(sp.at, "space: %s's point %s has a name of %d characters, more than %d; give the axes shorter labels ({values: [...], label: ...})",
				base.Name, p.Name, len(p.Name), maxNameLen)
			return nil
		}
		named[p.Name] = ix
		points = append(points, p)
	}
	c.Spaces = append(c.Spaces, spaceSummary(base.Name, sp, total, points, dropped))
	return points
}

// keeps reports whether the rule keeps a combination: a constraint true
// there, an exclusion that does not match it.
func (r *spaceRule) keeps(machine *vm.VM, vars map[string]any, idx []int) (bool, error) {
	if r.prog == nil {
		for ai, set := range r.match {
			if !slices.Contains(set, idx[ai]) {
				return true, nil
			}
		}
		return false, nil
	}
	out, err := machine.Run(r.prog, vars)
	if err != nil {
		return false, errors.New(exprMessage(err))
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("gives %v, not true or false", out)
	}
	return b, nil
}

// roleOverlaps refuses a deployment role that sets a flag or a variable
// the space varies: the role's value would replace the point's in every
// point. A role with a launch of its own takes none of the scenario's
// flags, so only its variables can overlap.
func (l *loader) roleOverlaps(s *Scenario, sp *space) {
	if s.Deployment == nil {
		return
	}
	for _, r := range s.Deployment.Roles {
		if len(r.Launch) == 0 {
			for _, a := range r.Args {
				if ax := sp.axis(a.Key, false); ax != nil {
					l.p.errorf(r.src.argPos[a.Key], "deployment.roles.%s.args.%s: an axis of the space (line %d); the role's value would replace each point's", r.Name, a.Key, ax.at.line)
				}
			}
		}
		for _, name := range append(slices.Sorted(maps.Keys(r.Env)), r.EnvRemove...) {
			if ax := sp.axis(name, true); ax != nil {
				l.p.errorf(r.src.envPos[name], "deployment.roles.%s.env.%s: an axis of the space (line %d); the role's value would replace each point's", r.Name, name, ax.at.line)
			}
		}
	}
}

// point is the scenario at one combination of the space: the base with
// each axis's value, named after them.
func (s *Scenario) point(sp *space, idx []int) *Scenario {
	p := s.clone()
	p.space = nil
	p.Name = pointName(s.Name, sp.axes, idx)
	args := map[string]Arg{}
	for _, a := range p.Args {
		args[a.Key] = a
	}
	for i, ax := range sp.axes {
		v := ax.values[idx[i]]
		if ax.env {
			p.Env[ax.name] = v.text
			p.src.envPos[ax.name] = v.at
			continue
		}
		b, isBool := v.val.(bool)
		switch {
		case isBool && !b:
			delete(args, ax.name) // false leaves the flag out, as in args
			delete(p.src.argPos, ax.name)
			continue
		case isBool:
			args[ax.name] = Arg{Key: ax.name, Bare: true}
		default:
			args[ax.name] = Arg{Key: ax.name, Values: []string{v.text}}
		}
		p.src.argPos[ax.name] = v.at
	}
	p.Args = nil
	for _, k := range slices.Sorted(maps.Keys(args)) {
		p.Args = append(p.Args, args[k])
	}
	what := assignment(sp.axes, idx)
	if s.Description != "" {
		what = s.Description + " (" + what + ")"
	}
	p.Description = what
	return p
}

// pointName is the name of the point at idx: the scenario's name, then
// each axis's part, joined by '.'.
func pointName(base string, axes []*spaceAxis, idx []int) string {
	parts := []string{base}
	for i, ax := range axes {
		parts = append(parts, ax.values[idx[i]].part)
	}
	return strings.Join(parts, ".")
}

// assignment is a point's values in words: "speculative-num-steps=3
// SGLANG_ENABLE_SPEC_V2=1".
func assignment(axes []*spaceAxis, idx []int) string {
	out := make([]string, len(axes))
	for i, ax := range axes {
		out[i] = ax.name + "=" + ax.values[idx[i]].text
	}
	return strings.Join(out, " ")
}

// gridCount is the number of combinations of the axes in words, counted
// in floating point so that no grid overflows it.
func gridCount(axes []*spaceAxis) string {
	n := 1.0
	for _, ax := range axes {
		n *= float64(len(ax.values))
	}
	if n > math.MaxInt32 {
		return strconv.FormatFloat(n, 'g', 3, 64)
	}
	return thousands(int(n))
}

// gridShape is the grid in words: "5 steps × 3 topk × 2 overlap".
func gridShape(axes []*spaceAxis) string {
	out := make([]string, len(axes))
	for i, ax := range axes {
		name := ax.label
		if name == "" {
			name = ax.name
		}
		out[i] = fmt.Sprintf("%d %s", len(ax.values), name)
	}
	return strings.Join(out, " × ")
}

// dropList is what each rule dropped, for a space that keeps nothing.
func dropList(rules []*spaceRule, dropped []int) string {
	var out []string
	for i, r := range rules {
		if dropped[i] > 0 {
			out = append(out, fmt.Sprintf("%s (line %d) drops %s", r.what, r.at.line, thousands(dropped[i])))
		}
	}
	return strings.Join(out, ", ")
}

// plural is "1 point" or "12 points".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return thousands(n) + " " + what + "s"
}

// thousands writes n with comma separators: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// pointNames lists a space's first points, for a message.
func pointNames(points []*Scenario) string {
	const shown = 3
	var out []string
	for i, p := range points {
		if i == shown {
			out = append(out, "…")
			break
		}
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// Space is a scenario's `space:` as the campaign expanded it: its grid,
// the points it launches and what each rule dropped. validate and the dry
// run show it (Lines); the manifest keeps it with the resolved campaign.
type Space struct {
	Scenario     string      // the scenario whose points these are
	At           string      // where its space: is written, file:line:col
	Axes         []SpaceAxis // in the order written
	Combinations int         // the grid: the product of the axes' sizes
	Points       []string    // the points launched, by name, in campaign order
	Rules        []SpaceRule // the constraints, then the exclusions, in the order written
}

// SpaceAxis is one axis of a Space.
type SpaceAxis struct {
	Name   string   // the flag (without dashes) or the variable
	Env    bool     // a variable of the server's environment
	Ident  string   // its name in constraints
	Label  string   // its part of a point's name, before the value
	Values []string // as written
}

// SpaceRule is one constraint or exclusion of a Space.
type SpaceRule struct {
	Rule    string // "constraints[0]", "exclude[1]"
	Text    string // the condition, or the exclusion as a flow mapping
	At      string // file:line:col
	Line    int    // the line of At
	Dropped int    // the combinations it is the first rule to drop
}

func spaceSummary(name string, sp *space, total int, points []*Scenario, dropped []int) *Space {
	out := &Space{Scenario: name, At: sp.at.String(), Combinations: total}
	for _, ax := range sp.axes {
		a := SpaceAxis{Name: ax.name, Env: ax.env, Ident: ax.ident, Label: ax.label}
		for _, v := range ax.values {
			a.Values = append(a.Values, v.text)
		}
		out.Axes = append(out.Axes, a)
	}
	for _, p := range points {
		out.Points = append(out.Points, p.Name)
	}
	for i, r := range sp.rules {
		out.Rules = append(out.Rules, SpaceRule{Rule: r.what, Text: r.text, At: r.at.String(), Line: r.at.line, Dropped: dropped[i]})
	}
	return out
}

// Lines is the space in a few lines: its grid and the points kept, then
// each rule with the combinations it dropped (those an earlier rule
// dropped already are counted there).
func (s *Space) Lines() []string {
	shape := make([]string, len(s.Axes))
	for i, ax := range s.Axes {
		name := ax.Label
		if name == "" {
			name = ax.Name
		}
		shape[i] = fmt.Sprintf("%d %s", len(ax.Values), name)
	}
	head := fmt.Sprintf("%s (%s): %s", s.Scenario, s.At, strings.Join(shape, " × "))
	if len(s.Axes) > 1 {
		head += fmt.Sprintf(" = %s combinations", thousands(s.Combinations))
	}
	lines := []string{head + ", " + plural(len(s.Points), "point")}
	for _, r := range s.Rules {
		lines = append(lines, fmt.Sprintf("%s (line %d) drops %s: %s", r.Rule, r.Line, thousands(r.Dropped), r.Text))
	}
	return lines
}

// foldPointWarnings makes one warning of those the points of a space
// share: the same message at the same place but for the point's name,
// which checking every point would otherwise repeat point by point.
func (l *loader) foldPointWarnings(c *Campaign) {
	spaceOf := map[string]string{} // a point's name → its space's scenario
	for _, sp := range c.Spaces {
		for _, p := range sp.Points {
			spaceOf[p] = sp.Scenario
		}
	}
	if len(spaceOf) == 0 {
		return
	}
	type group struct {
		first  *Error
		points []string
	}
	groups := map[string]*group{}
	var out []*Error
	for _, w := range l.p.warnings {
		point := ""
		for p := range spaceOf {
			if len(p) > len(point) && strings.Contains(w.Msg, p) {
				point = p
			}
		}
		if point == "" {
			out = append(out, w)
			continue
		}
		key := fmt.Sprintf("%s:%d:%d:%s", w.File, w.Line, w.Col, strings.ReplaceAll(w.Msg, point, "\x00"))
		g, ok := groups[key]
		if !ok {
			g = &group{first: w}
			groups[key] = g
			out = append(out, w)
		}
		g.points = append(g.points, point)
	}
	for _, g := range groups {
		if n := len(g.points); n > 1 {
			p := g.points[0]
			g.first.Msg = strings.ReplaceAll(g.first.Msg, p, fmt.Sprintf("%s and %s of %s", p, plural(n-1, "other point"), spaceOf[p]))
		}
	}
	l.p.warnings = out
}

// pointRef is the file of the space a scenario reference names one point
// of ("eagle3.steps3.topk1": scenarios/eagle3.yaml), when no scenario file
// of that name exists and the part before its first dot names one; "" for
// any other reference.
func (l *loader) pointRef(ref, nameDir string) string {
	dot := strings.IndexByte(ref, '.')
	if isPathRef(ref) || dot <= 0 {
		return ""
	}
	if _, err := l.read(refPath(ref, nameDir, "")); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	base := refPath(ref[:dot], nameDir, "")
	if _, err := l.read(base); err != nil {
		return ""
	}
	return base
}

// pickPoint is the one point of s's space named name, as scenarios[i]
// lists it; nil, with an error at e, when s has no such point.
func (l *loader) pickPoint(c *Campaign, d *doc, e *yaml.Node, i int, s *Scenario, name string) []*Scenario {
	if s.space == nil {
		d.errorf(e, "scenarios[%d]: %s names no scenario file, and %s has no space: whose point it could be", i, name, s.Name)
		return []*Scenario{nil}
	}
	spaces := len(c.Spaces)
	points := l.expandSpace(c, s)
	c.Spaces = c.Spaces[:spaces]
	if points == nil {
		return []*Scenario{nil}
	}
	for _, p := range points {
		if p.Name == name {
			return []*Scenario{p}
		}
	}
	d.errorf(e, "scenarios[%d]: %s is not a point of %s's space, whose %d points are %s", i, name, s.Name, len(points), pointNames(points))
	return []*Scenario{nil}
}
