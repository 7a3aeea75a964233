package campaign

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"
)

// A scenario's `space:` is a grid of configurations written once: axes over
// engine flags and environment variables, each a list of values, the
// constraints every point must meet and the partial points to leave out.
// The campaign expands it into its points, each an ordinary Scenario with a
// name of its own (eagle3.steps3.topk1), so that validate, the dry run, the
// preflight, the launches and the verdict treat a point as they treat a
// scenario written by hand. docs/CONFIG.md, "Spaces".

// MaxSpacePoints is the most points one space may expand to. Each point is
// a launch in every round and a scenario in every comparison: 256 points at
// three rounds are 768 launches, a night of a fleet of 16 hosts at 15
// minutes a launch, and with the baseline they make 32,896 pairs at each
// level, one family that Holm's correction (docs/METHOD.md) divides α over.
// A larger grid is weeks of one host and decides little, so it is refused
// when the campaign loads, before anything is launched.
const MaxSpacePoints = 256

// MaxSpaceCombinations is the largest grid whose combinations are looked
// at: each is checked against the constraints once when the campaign loads,
// well under a second at this size. A larger grid is refused before it is
// enumerated.
const MaxSpaceCombinations = 100_000

// space is a scenario's `space:`, read and checked: its axes, in the order
// written, and the rules that drop combinations, constraints first.
type space struct {
	at    position // the space: key
	axes  []*spaceAxis
	rules []*spaceRule
}

// spaceAxis is one axis: a flag or a variable and the values it takes.
type spaceAxis struct {
	name   string // the flag without dashes, or the variable, as written
	env    bool   // a variable of the server's environment, not a flag
	ident  string // its name in constraints
	label  string // what it adds to a point's name, before its value
	given  bool   // label written, not derived
	values []spaceValue
	at     position // the axis's key
}

// spaceValue is one value of an axis.
type spaceValue struct {
	text string // as YAML wrote it: what the flag or the variable gets
	val  any    // what a constraint sees: int, float64, bool or string
	part string // what it adds to a point's name, its axis's label included
	at   position
}

// spaceRule drops combinations: a constraint that is false there, or an
// exclusion that names them.
type spaceRule struct {
	what  string // "constraints[0]", "exclude[1]"
	text  string // the condition, or the exclusion as a flow mapping
	at    position
	prog  *vm.Program   // a constraint's
	match map[int][]int // an exclusion's: axis index → the value indices it names
}

// spaceFlag checks the flag an axis varies by the rules of args keys.
func (d *doc) spaceFlag(k *yaml.Node, what string) bool {
	key := k.Value
	switch {
	case key == "":
		d.errorf(k, "%s: empty key", what)
	case strings.HasPrefix(key, "-"):
		d.errorf(k, "%s: key %q: write it without leading dashes (%q)", what, key, strings.TrimLeft(key, "-"))
	case strings.ContainsAny(key, " \t"):
		d.errorf(k, "%s: key %q contains a space", what, key)
	case strings.ContainsRune(key, '='):
		d.errorf(k, "%s: key %q contains '='", what, key)
	default:
		return d.checkWord(k, what+" key", key)
	}
	return false
}

// space decodes a scenario's `space:`; nil when it is refused (the errors
// say why) or null (which removes an inherited space).
func (d *doc) space(key, v *yaml.Node) *space {
	if isNull(v) {
		return nil
	}
	before := len(d.p.errs)
	sp := &space{at: d.pos(key)}
	var argsN, envN, consN, exclN *yaml.Node
	d.mapping(v, "space", map[string]field{
		"args":        func(_, n *yaml.Node) { argsN = n },
		"env":         func(_, n *yaml.Node) { envN = n },
		"constraints": func(_, n *yaml.Node) { consN = n },
		"exclude":     func(_, n *yaml.Node) { exclN = n },
	})
	if v.Kind != yaml.MappingNode {
		return nil
	}
	d.spaceAxes(sp, argsN, false)
	d.spaceAxes(sp, envN, true)
	if len(sp.axes) == 0 && len(d.p.errs) == before {
		d.errorf(key, "space: no axes (give space.args or space.env, each axis a list of values)")
	}
	slices.SortStableFunc(sp.axes, func(a, b *spaceAxis) int {
		if a.at.line != b.at.line {
			return a.at.line - b.at.line
		}
		return a.at.col - b.at.col
	})
	d.spaceIdents(sp)
	if len(d.p.errs) > before {
		return nil // the rules are read against the axes
	}
	d.spaceLabels(sp)
	d.spaceConstraints(sp, consN)
	d.spaceExclusions(sp, exclN)
	if len(d.p.errs) > before {
		return nil
	}
	return sp
}

// spaceAxes decodes space.args or space.env: each axis a list of values,
// or {values: [...], label: ...}.
func (d *doc) spaceAxes(sp *space, n *yaml.Node, env bool) {
	what := "space.args"
	if env {
		what = "space.env"
	}
	d.pairs(n, what, func(k, v *yaml.Node) {
		if env && !envNameRe.MatchString(k.Value) {
			d.errorf(k, "%s: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", what, k.Value)
			return
		}
		if !env && !d.spaceFlag(k, what) {
			return
		}
		ax := &spaceAxis{name: k.Value, env: env, ident: spaceIdent(k.Value), at: d.pos(k)}
		name := what + "." + k.Value
		list := v
		if v.Kind == yaml.MappingNode {
			list = nil
			d.mapping(v, name, map[string]field{
				"values": func(_, n *yaml.Node) { list = n },
				"label": func(_, n *yaml.Node) {
					s, ok := d.str(n, name+".label")
					switch {
					case !ok:
					case !labelRe.MatchString(s):
						d.errorf(n, "%s.label: %q: letters, digits, '_' and '-' only (a '.' separates the axes in a point's name)", name, s)
					default:
						ax.label, ax.given = s, true
					}
				},
			})
			if list == nil {
				if !hasKey(v, "values") {
					d.errorf(v, "%s: values: missing (the list of values the axis takes)", name)
				}
				return
			}
			name += ".values"
		}
		if list.Kind != yaml.SequenceNode {
			d.errorf(list, "%s: want a list of values (or {values: [...], label: ...}), got %s", name, kindName(list))
			return
		}
		if len(list.Content) == 0 {
			d.errorf(list, "%s: no values (an axis takes at least one)", name)
			return
		}
		seen := map[string]*yaml.Node{}
		for i, c := range list.Content {
			at := c
			c = deref(c)
			w := fmt.Sprintf("%s[%d]", name, i)
			if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
				got := "an unreadable value"
				if c != nil {
					got = kindName(c)
				}
				d.errorf(at, "%s: want a value (a number, a word, true or false), got %s", w, got)
				continue
			}
			text, ok := d.word(c, w)
			if !ok {
				continue
			}
			val := scalarValue(c)
			key := valueKey(val)
			if first, dup := seen[key]; dup {
				d.errorf(c, "%s: %s repeated (first at line %d)", w, text, first.Line)
				continue
			}
			seen[key] = c
			ax.values = append(ax.values, spaceValue{text: text, val: val, at: d.pos(c)})
		}
		if len(ax.values) == len(list.Content) {
			sp.axes = append(sp.axes, ax)
		}
	})
	numbersAsFloats(sp.axes)
}

// labelRe is what an axis's label may be: part of a scenario name, without
// the '.' that separates the axes.
var labelRe = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

// scalarValue is a value as a constraint sees it: a YAML integer, float or
// boolean as such, anything else as its text.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int":
		var i int
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	}
	return n.Value
}

// valueKey tells two values apart as a constraint would: 4 and 4.0 are
// one number, "4" is a string.
func valueKey(v any) string {
	switch x := v.(type) {
	case int:
		return "n" + strconv.FormatFloat(float64(x), 'g', -1, 64)
	case float64:
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// numbersAsFloats makes an axis of integers and floats all floats, so that
// a constraint sees one type of number on it.
func numbersAsFloats(axes []*spaceAxis) {
	for _, ax := range axes {
		if spaceType(ax) != types.Float64 {
			continue
		}
		for i, v := range ax.values {
			if n, ok := v.val.(int); ok {
				ax.values[i].val = float64(n)
			}
		}
	}
}

// spaceType is the type a constraint sees an axis as: its values' one
// type, float64 for integers mixed with floats, else any (checked when the
// constraint runs).
func spaceType(ax *spaceAxis) types.Type {
	var ints, floats, bools, strs int
	for _, v := range ax.values {
		switch v.val.(type) {
		case int:
			ints++
		case float64:
			floats++
		case bool:
			bools++
		default:
			strs++
		}
	}
	n := len(ax.values)
	switch {
	case ints == n:
		return types.Int
	case ints+floats == n:
		return types.Float64
	case bools == n:
		return types.Bool
	case strs == n:
		return types.String
	}
	return types.Any
}

// spaceIdent is an axis's name in constraints: every character that cannot
// be in an expression's name ('-' above all) becomes '_', and a leading
// digit gets a '_' before it (speculative-num-steps → speculative_num_steps).
func spaceIdent(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// what names an axis in messages as its key is written.
func (ax *spaceAxis) what() string {
	if ax.env {
		return "space.env." + ax.name
	}
	return "space.args." + ax.name
}

// spaceIdents refuses two axes with one name in constraints: the same
// name in args and env, or two flags that differ only in '-' and '_'.
func (d *doc) spaceIdents(sp *space) {
	byIdent := map[string]*spaceAxis{}
	for _, ax := range sp.axes {
		first, dup := byIdent[ax.ident]
		if !dup {
			byIdent[ax.ident] = ax
			continue
		}
		if first.name == ax.name {
			d.p.errorf(ax.at, "%s: duplicate axis: %s (line %d) varies the same name", ax.what(), first.what(), first.at.line)
		} else {
			d.p.errorf(ax.at, "%s: duplicate axis: %s (line %d) has the same name in constraints, %s", ax.what(), first.what(), first.at.line, ax.ident)
		}
	}
}

// spaceLabels derives the labels not written and each value's part of a
// point's name, and refuses labels or parts that would not tell points
// apart.
func (d *doc) spaceLabels(sp *space) {
	for _, ax := range sp.axes {
		if !ax.given {
			ax.label = defaultLabel(ax, sp.axes)
		}
	}
	byLabel := map[string]*spaceAxis{}
	for _, ax := range sp.axes {
		if first, dup := byLabel[strings.ToLower(ax.label)]; dup && ax.label != "" {
			d.p.errorf(ax.at, "%s: label %q is also that of %s (line %d); give one of them a label of its own ({values: [...], label: ...})",
				ax.what(), ax.label, first.what(), first.at.line)
			continue
		}
		byLabel[strings.ToLower(ax.label)] = ax
		parts := map[string]spaceValue{}
		for i, v := range ax.values {
			ax.values[i].part = valuePart(ax.label, v.val, v.text)
			if first, dup := parts[ax.values[i].part]; dup {
				d.p.errorf(v.at, "%s: %s and %s (line %d) would both name their points %q",
					ax.what(), v.text, first.text, first.at.line, ax.values[i].part)
				continue
			}
			parts[ax.values[i].part] = ax.values[i]
		}
	}
}

// defaultLabel is an axis's label when none is written: for an axis of
// booleans its whole name, since a switch means what all its words say
// (disable-overlap-schedule); else the fewest of its last words that no
// other axis ends with (speculative-num-steps → steps), lower case.
func defaultLabel(ax *spaceAxis, axes []*spaceAxis) string {
	words := labelWords(ax.name)
	if spaceType(ax) == types.Bool || len(words) == 0 {
		return strings.Join(words, "-")
	}
	for n := 1; n < len(words); n++ {
		tail := words[len(words)-n:]
		clash := false
		for _, o := range axes {
			ow := labelWords(o.name)
			if o == ax || len(ow) < n {
				continue
			}
			if slices.Equal(ow[len(ow)-n:], tail) || o.given && strings.EqualFold(o.label, strings.Join(tail, "-")) {
				clash = true
				break
			}
		}
		if !clash {
			return strings.Join(tail, "-")
		}
	}
	return strings.Join(words, "-")
}

// labelWords splits a flag or variable name into lower-case words.
func labelWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// unsafePart is what a value's text may not carry into a scenario name.
var unsafePart = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// valuePart is a value's part of a point's name: the label and the value,
// joined by '-' unless the label ends in a letter and the value begins with
// a digit (steps3, bs160, v2-1); a boolean reads on or off.
func valuePart(label string, val any, text string) string {
	s := unsafePart.ReplaceAllString(text, "_")
	if b, ok := val.(bool); ok {
		s = map[bool]string{true: "on", false: "off"}[b]
	}
	if s == "" {
		s = "empty"
	}
	if label == "" {
		return s
	}
	last := label[len(label)-1]
	if (last >= 'a' && last <= 'z' || last >= 'A' && last <= 'Z') && s[0] >= '0' && s[0] <= '9' {
		return label + s
	}
	return label + "-" + s
}

// identNames collects the names a condition reads, less those it binds
// itself (let x = ...).
type identNames struct{ used, bound []string }

func (v *identNames) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.IdentifierNode:
		v.used = append(v.used, x.Value)
	case *ast.VariableDeclaratorNode:
		v.bound = append(v.bound, x.Name)
	}
}

// spaceConstraints compiles space.constraints: each a condition over the
// axes (their names in constraints), true at every point kept.
func (d *doc) spaceConstraints(sp *space, n *yaml.Node) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "space.constraints: want a list of conditions, got %s", kindName(n))
		return
	}
	env := types.Map{}
	var idents []string
	for _, ax := range sp.axes {
		env[ax.ident] = spaceType(ax)
		idents = append(idents, ax.ident)
	}
	for i, c := range n.Content {
		c = deref(c)
		what := fmt.Sprintf("space.constraints[%d]", i)
		text, ok := d.str(c, what)
		if !ok {
			continue
		}
		if strings.TrimSpace(text) == "" {
			d.errorf(c, "%s: empty", what)
			continue
		}
		tree, err := parser.Parse(text)
		if err != nil {
			d.errorf(c, "%s: does not compile: %s", what, exprMessage(err))
			continue
		}
		var names identNames
		ast.Walk(&tree.Node, &names)
		var unknown []string
		axes := 0
		for _, name := range names.used {
			switch {
			case slices.Contains(idents, name):
				axes++
			case !slices.Contains(names.bound, name) && !slices.Contains(unknown, name):
				unknown = append(unknown, name)
			}
		}
		switch {
		case len(unknown) > 0:
			d.errorf(c, "%s: unknown name %s (the axes are %s)%s", what, strings.Join(unknown, ", "), strings.Join(idents, ", "), dashHint(text, sp.axes))
			continue
		case axes == 0:
			d.errorf(c, "%s: names no axis, so it keeps or drops every combination alike (the axes are %s)", what, strings.Join(idents, ", "))
			continue
		}
		prog, err := expr.Compile(text, expr.Env(env))
		if err != nil {
			d.errorf(c, "%s: does not compile: %s", what, exprMessage(err))
			continue
		}
		if t := prog.Node().Type(); t != nil && t.Kind() != reflect.Bool && t.Kind() != reflect.Interface {
			d.errorf(c, "%s: is not a condition: it gives %s, not true or false", what, t)
			continue
		}
		sp.rules = append(sp.rules, &spaceRule{what: what, text: text, at: d.pos(c), prog: prog})
	}
}

// dashHint says how to write an axis whose name the condition spelt with
// its dashes, which an expression reads as subtractions.
func dashHint(text string, axes []*spaceAxis) string {
	var hints []string
	for _, ax := range axes {
		if ax.ident != ax.name && strings.Contains(text, ax.name) {
			hints = append(hints, fmt.Sprintf("%s as %s", ax.name, ax.ident))
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "; in a constraint write " + strings.Join(hints, ", ")
}

// exprMessage is an expression error on one line: the library's message
// and the column (1-based) it is at.
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		if fe.Snippet == "" {
			return fe.Message
		}
		return fmt.Sprintf("%s at column %d", fe.Message, fe.Column+1)
	}
	return err.Error()
}

// spaceExclusions decodes space.exclude: partial points, each a mapping of
// axes to a value (or a list of values) of theirs; a combination that
// matches every axis of one is dropped.
func (d *doc) spaceExclusions(sp *space, n *yaml.Node) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "space.exclude: want a list of partial points ({axis: value, ...}), got %s", kindName(n))
		return
	}
	for i, e := range n.Content {
		at := e
		e = deref(e)
		what := fmt.Sprintf("space.exclude[%d]", i)
		if e == nil || e.Kind != yaml.MappingNode {
			got := "an unreadable value"
			if e != nil {
				got = kindName(e)
			}
			d.errorf(at, "%s: want a mapping of axes to values ({speculative-eagle-topk: 4}), got %s", what, got)
			continue
		}
		if len(e.Content) == 0 {
			d.errorf(e, "%s: empty: it would drop every combination", what)
			continue
		}
		r := &spaceRule{what: what, at: d.pos(e), match: map[int][]int{}}
		var shown []string
		d.pairs(e, what, func(k, v *yaml.Node) {
			ai := slices.IndexFunc(sp.axes, func(ax *spaceAxis) bool { return ax.name == k.Value || ax.ident == k.Value })
			if ai < 0 {
				d.errorf(k, "%s: %q is not an axis of the space (%s)", what, k.Value, axisNames(sp.axes))
				return
			}
			ax := sp.axes[ai]
			if _, dup := r.match[ai]; dup {
				d.errorf(k, "%s: %q names axis %s twice", what, k.Value, ax.name)
				return
			}
			vals := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				vals = v.Content
			}
			var texts []string
			var set []int
			for _, x := range vals {
				x = deref(x)
				if x == nil || x.Kind != yaml.ScalarNode || isNull(x) {
					d.errorf(v, "%s.%s: want a value of the axis, or a list of them", what, k.Value)
					return
				}
				vi := ax.valueIndex(x)
				if vi < 0 {
					d.errorf(x, "%s.%s: %s is not one of the axis's values (%s)", what, k.Value, x.Value, ax.valueList())
					return
				}
				set = append(set, vi)
				texts = append(texts, ax.values[vi].text)
			}
			r.match[ai] = set
			val := strings.Join(texts, ", ")
			if v.Kind == yaml.SequenceNode {
				val = "[" + val + "]"
			}
			shown = append(shown, ax.name+": "+val)
		})
		if len(r.match) == len(e.Content)/2 {
			r.text = "{" + strings.Join(shown, ", ") + "}"
			sp.rules = append(sp.rules, r)
		}
	}
}

// valueIndex finds the axis's value a scalar names: the same value as a
// constraint sees it (4 and 4.0 alike), else the same text ("1" for 1).
func (ax *spaceAxis) valueIndex(n *yaml.Node) int {
	key := valueKey(scalarValue(n))
	if i := slices.IndexFunc(ax.values, func(v spaceValue) bool { return valueKey(v.val) == key }); i >= 0 {
		return i
	}
	return slices.IndexFunc(ax.values, func(v spaceValue) bool { return v.text == n.Value })
}

// valueList is an axis's values as written, for messages.
func (ax *spaceAxis) valueList() string {
	out := make([]string, len(ax.values))
	for i, v := range ax.values {
		out[i] = v.text
	}
	return strings.Join(out, ", ")
}

func axisNames(axes []*spaceAxis) string {
	out := make([]string, len(axes))
	for i, ax := range axes {
		out[i] = ax.name
	}
	return strings.Join(out, ", ")
}
