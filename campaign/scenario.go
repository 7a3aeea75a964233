package campaign

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// scenarioSrc remembers where each resolved value was written, so warnings
// about a merged scenario can point into the file that set the value.
type scenarioSrc struct {
	file   position            // the scenario's own file, at its top-level mapping
	argPos map[string]position // by arg key
	envPos map[string]position // by variable name
}

// rawArg is one entry of a file's `args` before merging.
type rawArg struct {
	arg    Arg
	remove bool // false or null: drop an inherited flag
	at     position
}

// rawEnv is one entry of a file's `env` before merging.
type rawEnv struct {
	name, value string
	remove      bool // null: drop an inherited variable
	at          position
}

// rawScenario is one scenario file as written, before `extends` is applied.
type rawScenario struct {
	name, description, extends string
	engine, model              string
	launch                     []string
	hasEngine, hasModel        bool
	hasLaunch                  bool
	gpus                       int
	hasGPUs                    bool
	prefixCache                *PrefixCache
	extendsAt                  position
	args                       []rawArg
	env                        []rawEnv
	deployment                 *rawDeployment // nil when the file has no deployment: key
	// space is the file's space: (nil when refused, or when null removes
	// an inherited one); hasSpace says the key was written.
	space    *space
	hasSpace bool
}

var (
	// nameRe is what a campaign or scenario name may be: it becomes a
	// directory name under results/.
	nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// envNameRe is a POSIX environment variable name.
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxNameLen bounds names so a results path stays well under PATH_MAX.
const maxNameLen = 100

func validName(s string) bool { return len(s) <= maxNameLen && nameRe.MatchString(s) }

// isPathRef reports whether a scenario reference is a file path rather than
// a bare name.
func isPathRef(ref string) bool {
	return strings.ContainsRune(ref, '/') || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml")
}

// refPath resolves a scenario reference: a bare NAME is nameDir/NAME.yaml; a
// path is relative to pathDir (the directory of the file that names it).
func refPath(ref, nameDir, pathDir string) string {
	if !isPathRef(ref) {
		return filepath.Clean(filepath.Join(nameDir, ref+".yaml"))
	}
	if filepath.IsAbs(ref) {
		return filepath.Clean(ref)
	}
	return filepath.Clean(filepath.Join(pathDir, ref))
}

// scenarioEntry caches one scenario file's resolution for the whole load, so
// a parent shared by several children is read, and reported, once.
type scenarioEntry struct {
	loading bool      // on the current extends chain: meeting it again is a cycle
	s       *Scenario // merged with its parents, not yet defaulted; nil when broken
}

// loader reads files for one Load and collects every problem.
type loader struct {
	p    *problems
	read func(string) ([]byte, error)
	scen map[string]*scenarioEntry
}

func newLoader(read func(string) ([]byte, error)) *loader {
	return &loader{p: newProblems(), read: read, scen: map[string]*scenarioEntry{}}
}

// readMsg turns a read failure into a message without repeating the path.
func readMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// LoadScenario loads one scenario file on its own, with `extends` resolved
// (a bare parent NAME is NAME.yaml beside the file), defaults applied and the
// per-scenario checks run. Problems come back as *Errors. A `space:` is not
// expanded here: a campaign expands it into its points (Load).
func LoadScenario(path string) (*Scenario, error) {
	l := newLoader(os.ReadFile)
	s := l.scenario(filepath.Clean(path), position{file: path}, "scenario")
	if s != nil {
		l.finish(s)
	}
	if err := l.p.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// scenario returns a copy of the resolved scenario at path, ready to be
// finished; ref is where it was named, for a missing file.
func (l *loader) scenario(path string, ref position, what string) *Scenario {
	s := l.resolve(path, ref, what, nil)
	if s == nil {
		return nil
	}
	return s.clone()
}

// resolve reads and merges the scenario at path with its parents. stack is
// the chain of files that led here, for naming a cycle.
func (l *loader) resolve(path string, ref position, what string, stack []string) *Scenario {
	if e, ok := l.scen[path]; ok {
		if e.loading {
			chain := append(slices.Clone(stack), path)
			i := slices.Index(chain, path)
			l.p.errorf(ref, "extends forms a cycle: %s", strings.Join(chain[i:], " → "))
			return nil
		}
		return e.s
	}
	e := &scenarioEntry{loading: true}
	l.scen[path] = e
	defer func() { e.loading = false }()

	data, err := l.read(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			l.p.errorf(ref, "unknown %s %q: %s does not exist", what, name, path)
		} else {
			l.p.errorf(ref, "reading %s %s: %s", what, path, readMsg(err))
		}
		return nil
	}
	d := &doc{file: path, p: l.p}
	before := len(l.p.errs)
	root := d.parse(data)
	raw := d.scenario(root)
	if raw == nil || len(l.p.errs) > before {
		return nil
	}

	s := &Scenario{
		Name:        raw.name,
		Description: raw.description,
		Extends:     raw.extends,
		File:        path,
		Env:         map[string]string{},
		src:         &scenarioSrc{file: d.pos(root), argPos: map[string]position{}, envPos: map[string]position{}},
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	args := map[string]Arg{}
	if raw.extends != "" {
		dir := filepath.Dir(path)
		parent := l.resolve(refPath(raw.extends, dir, dir), raw.extendsAt, "parent scenario", append(stack, path))
		if parent == nil {
			return nil
		}
		s.Engine, s.Model, s.Launch = parent.Engine, parent.Model, slices.Clone(parent.Launch)
		s.Deployment = parent.Deployment.clone()
		s.GPUCount = parent.GPUCount
		s.PrefixCache = parent.PrefixCache
		maps.Copy(s.Env, parent.Env)
		maps.Copy(s.src.argPos, parent.src.argPos)
		maps.Copy(s.src.envPos, parent.src.envPos)
		for _, a := range parent.Args {
			args[a.Key] = a
		}
		s.space = parent.space
	}
	if raw.hasSpace {
		s.space = raw.space
	}
	l.spaceOverlaps(s.space, raw)
	if raw.hasEngine {
		s.Engine = raw.engine
	}
	if raw.hasModel {
		s.Model = raw.model
	}
	if raw.hasLaunch {
		s.Launch = raw.launch
	}
	if raw.hasGPUs {
		s.GPUCount = raw.gpus
	}
	if raw.prefixCache != nil {
		s.PrefixCache = raw.prefixCache
	}
	for _, a := range raw.args {
		if a.remove {
			delete(args, a.arg.Key)
			delete(s.src.argPos, a.arg.Key)
			continue
		}
		args[a.arg.Key] = a.arg
		s.src.argPos[a.arg.Key] = a.at
	}
	for _, v := range raw.env {
		if v.remove {
			delete(s.Env, v.name)
			delete(s.src.envPos, v.name)
			continue
		}
		s.Env[v.name] = v.value
		s.src.envPos[v.name] = v.at
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		s.Args = append(s.Args, args[k])
	}
	if raw.deployment != nil {
		s.Deployment = mergeDeployment(s.Deployment, raw.deployment)
	}
	e.s = s
	return s
}

// clone copies a cached scenario so finishing one use cannot change another.
func (s *Scenario) clone() *Scenario {
	c := *s
	c.Args = make([]Arg, len(s.Args))
	for i, a := range s.Args {
		a.Values = slices.Clone(a.Values)
		c.Args[i] = a
	}
	c.Env = maps.Clone(s.Env)
	c.Launch = slices.Clone(s.Launch)
	c.Deployment = s.Deployment.clone()
	if s.src != nil {
		src := *s.src
		src.argPos = maps.Clone(s.src.argPos)
		src.envPos = maps.Clone(s.src.envPos)
		c.src = &src
	}
	return &c
}

// finish applies defaults to a resolved scenario and runs the checks that
// need the whole merged scenario.
func (l *loader) finish(s *Scenario) {
	if s.Engine == "" {
		s.Engine = DefaultEngine
	}
	at := s.src.file
	if s.Deployment != nil {
		// Each role's server is checked as a scenario's would be: a
		// deployment's own keys say what the scenario's leave out.
		l.finishDeployment(s)
		return
	}
	if len(s.Launch) > 0 {
		return
	}
	if s.Engine == engine.Generic {
		l.p.errorf(at, "scenario %s: engine generic needs a launch command (`launch:`)", s.Name)
		return
	}
	if s.Model == "" {
		l.p.errorf(at, "scenario %s: no model (set `model` here or in a parent)", s.Name)
	}
	p := s.Profile()
	if p == nil {
		return // refused when the file was read
	}
	for _, a := range s.Args {
		if by, ok := p.Reserved[a.Key]; ok {
			l.p.errorf(s.src.argPos[a.Key], "args: %s is set by bakeoff from %s; remove it", a.Key, by)
		}
	}
}

// scenario decodes a scenario file's root node; nil when it is unusable.
func (d *doc) scenario(root *yaml.Node) *rawScenario {
	if root == nil {
		return nil
	}
	r := &rawScenario{}
	d.mapping(root, "scenario", map[string]field{
		"name": func(_, v *yaml.Node) {
			if s, ok := d.str(v, "name"); ok {
				if !validName(s) {
					d.errorf(v, "name: %q must be letters, digits, '.', '_' or '-' (it names a results directory)", s)
				}
				r.name = s
			}
		},
		"description": func(_, v *yaml.Node) {
			r.description, _ = d.str(v, "description")
		},
		"extends": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "extends"); ok {
				if s == "" {
					d.errorf(v, "extends: empty")
					return
				}
				r.extends, r.extendsAt = s, d.pos(v)
			}
		},
		"engine": func(_, v *yaml.Node) {
			if s, ok := d.str(v, "engine"); ok {
				if engine.Lookup(s) == nil {
					d.errorf(v, "engine: unknown engine %q (want %s)", s, engine.NameList())
					return
				}
				r.engine, r.hasEngine = s, true
			}
		},
		"model": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "model"); ok {
				if s == "" {
					d.errorf(v, "model: empty")
					return
				}
				r.model, r.hasModel = s, true
			}
		},
		"args": func(_, v *yaml.Node) { r.args = d.args(v) },
		"env": func(_, v *yaml.Node) {
			d.env(v, "env", func(name, value string, remove bool, at position) {
				r.env = append(r.env, rawEnv{name: name, value: value, remove: remove, at: at})
			})
		},
		"launch": func(_, v *yaml.Node) {
			if w, ok := d.words(v, "launch"); ok {
				r.launch, r.hasLaunch = w, true
			}
		},
		"deployment": func(_, v *yaml.Node) { r.deployment = d.deployment(v) },
		"gpus": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "gpus", 1); ok && n >= 1 {
				r.gpus, r.hasGPUs = n, true
			}
		},
		"prefix_cache": func(_, v *yaml.Node) { r.prefixCache = d.prefixCache(v, "prefix_cache") },
		"space":        func(k, v *yaml.Node) { r.space, r.hasSpace = d.space(k, v), true },
	})
	return r
}

// prefixCache decodes a prefix_cache setting (PrefixCache): `none`, or a
// mapping with one of reset (an HTTP call, "METHOD /path") and
// reset_command (a shell command line). Nil when it is refused.
func (d *doc) prefixCache(v *yaml.Node, what string) *PrefixCache {
	v = deref(v)
	if v == nil {
		return nil
	}
	if v.Kind == yaml.ScalarNode {
		if s, ok := d.str(v, what); ok {
			if s != "none" {
				d.errorf(v, "%s: %q: want none, or a mapping with reset (an HTTP call, e.g. \"POST /flush_cache\") or reset_command", what, s)
				return nil
			}
			return &PrefixCache{None: true}
		}
		return nil
	}
	p := &PrefixCache{}
	bad := false // a field was refused: its own error says so
	d.mapping(v, what, map[string]field{
		"reset": func(_, n *yaml.Node) {
			s, ok := d.str(n, what+".reset")
			bad = bad || !ok
			if ok {
				if msg := checkResetCall(s); msg != "" {
					d.errorf(n, "%s.reset: %q: %s", what, s, msg)
					bad = true
					return
				}
				p.Reset = s
			}
		},
		"reset_command": func(_, n *yaml.Node) {
			s, ok := d.str(n, what+".reset_command")
			bad = bad || !ok
			if ok {
				if strings.TrimSpace(s) == "" {
					d.errorf(n, "%s.reset_command: empty", what)
					bad = true
					return
				}
				p.ResetCommand = s
			}
		},
	})
	switch {
	case v.Kind != yaml.MappingNode || bad:
		return nil
	case p.Reset != "" && p.ResetCommand != "":
		d.errorf(v, "%s: give reset or reset_command, not both", what)
		return nil
	case p.Reset == "" && p.ResetCommand == "":
		d.errorf(v, "%s: want reset (an HTTP call, e.g. \"POST /flush_cache\") or reset_command", what)
		return nil
	}
	return p
}

// checkResetCall says what is wrong with a reset call ("POST /path" or
// "/path"), or "" when it is well formed.
func checkResetCall(s string) string {
	f := strings.Fields(s)
	switch {
	case len(f) == 1 && strings.HasPrefix(f[0], "/"):
		return ""
	case len(f) == 2 && strings.HasPrefix(f[1], "/") && slices.Contains([]string{"GET", "POST", "PUT", "DELETE"}, f[0]):
		return ""
	}
	return "want METHOD /path (GET, POST, PUT or DELETE; POST when left out)"
}

// args decodes a scenario's `args` mapping.
func (d *doc) args(n *yaml.Node) []rawArg {
	var out []rawArg
	d.pairs(n, "args", func(k, v *yaml.Node) {
		key := k.Value
		what := "args." + key
		switch {
		case key == "":
			d.errorf(k, "args: empty key")
			return
		case strings.HasPrefix(key, "-"):
			d.errorf(k, "args: key %q: write it without leading dashes (%q)", key, strings.TrimLeft(key, "-"))
			return
		case strings.ContainsAny(key, " \t"):
			d.errorf(k, "args: key %q contains a space", key)
			return
		case strings.ContainsRune(key, '='):
			d.errorf(k, "args: key %q contains '=': give the value as the key's value", key)
			return
		case !d.checkWord(k, "args key", key):
			return
		}
		a := rawArg{arg: Arg{Key: key}, at: d.pos(k)}
		switch {
		case v.Kind == yaml.ScalarNode && isNull(v):
			a.remove = true
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool":
			b, ok := d.boolean(v, what)
			if !ok {
				return
			}
			a.remove, a.arg.Bare = !b, b
		case v.Kind == yaml.ScalarNode:
			s, ok := d.word(v, what)
			if !ok {
				return
			}
			a.arg.Values = []string{s}
		case v.Kind == yaml.SequenceNode:
			if len(v.Content) == 0 {
				d.errorf(v, "%s: empty list (use false or null to remove the flag)", what)
				return
			}
			for i, c := range v.Content {
				c = deref(c)
				if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
					d.errorf(v.Content[i], "%s[%d]: want a value, got %s", what, i, kindName(c))
					return
				}
				s, ok := d.word(c, fmt.Sprintf("%s[%d]", what, i))
				if !ok {
					return
				}
				a.arg.Values = append(a.arg.Values, s)
			}
		default:
			d.errorf(v, "%s: want a value or a list of values, got %s (write JSON as a quoted string)", what, kindName(v))
			return
		}
		out = append(out, a)
	})
	return out
}

// env decodes an `env` mapping; a null value removes an inherited variable.
func (d *doc) env(n *yaml.Node, what string, fn func(name, value string, remove bool, at position)) {
	d.pairs(n, what, func(k, v *yaml.Node) {
		if !envNameRe.MatchString(k.Value) {
			d.errorf(k, "%s: %q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", what, k.Value)
			return
		}
		if isNull(v) {
			fn(k.Value, "", true, d.pos(k))
			return
		}
		if v.Kind != yaml.ScalarNode {
			d.errorf(v, "%s.%s: want a value, got %s", what, k.Value, kindName(v))
			return
		}
		s, ok := d.word(v, what+"."+k.Value)
		if !ok {
			return
		}
		fn(k.Value, s, false, d.pos(k))
	})
}
