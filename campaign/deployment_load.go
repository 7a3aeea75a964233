package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// Bounds of a deployment: more would be a typo, and every instance is a
// process bakeoff watches and stops.
const (
	MaxRoleCount  = 64 // instances of one role
	MaxRoleNodes  = 64 // nodes one launch spans
	MaxRoleGPUs   = 64 // GPUs of one instance
	MaxRoleGPUIdx = 1023
)

// rawDeployment is a scenario file's `deployment:` as written.
type rawDeployment struct {
	remove               bool // deployment: null, dropping an inherited one
	serve, figures       string
	rendezvous           int
	hasServe, hasFigures bool
	hasRendezvous        bool
	at, serveAt          position
	rendezvousAt         position
	figuresAt            position
	roles                []*rawRole
}

// rawRole is one entry of `deployment.roles` as written.
type rawRole struct {
	name                                                                           string
	at                                                                             position
	remove                                                                         bool // ROLE: null, dropping an inherited role
	engine, model                                                                  string
	launch                                                                         []string
	args                                                                           []rawArg
	env                                                                            []rawEnv
	count                                                                          int
	nodes                                                                          []int
	gpus                                                                           RoleGPUs
	port                                                                           int
	health                                                                         string
	hasEngine, hasModel, hasLaunch, hasCount, hasNode, hasGPUs, hasPort, hasHealth bool
	launchAt, countAt, nodeAt, gpusAt, portAt, healthAt                            position
}

// deployment decodes a scenario's `deployment:` mapping.
func (d *doc) deployment(v *yaml.Node) *rawDeployment {
	r := &rawDeployment{at: d.pos(v)}
	if isNull(v) {
		r.remove = true
		return r
	}
	d.mapping(v, "deployment", map[string]field{
		"serve": func(_, v *yaml.Node) {
			if s, ok := d.str(v, "deployment.serve"); ok {
				r.serve, r.hasServe, r.serveAt = s, true, d.pos(v)
			}
		},
		"figures": func(_, v *yaml.Node) {
			if s, ok := d.str(v, "deployment.figures"); ok {
				r.figures, r.hasFigures, r.figuresAt = s, true, d.pos(v)
			}
		},
		"rendezvous_port": func(_, v *yaml.Node) {
			if n, ok := d.integer(v, "deployment.rendezvous_port"); ok {
				if n < 1 || n > maxPort {
					d.errorf(v, "deployment.rendezvous_port: %d is out of range (1-%d)", n, maxPort)
					return
				}
				r.rendezvous, r.hasRendezvous, r.rendezvousAt = n, true, d.pos(v)
			}
		},
		"roles": func(_, v *yaml.Node) { r.roles = d.roles(v) },
	})
	return r
}

// roles decodes deployment.roles: a mapping of role names to roles, in
// file order.
func (d *doc) roles(v *yaml.Node) []*rawRole {
	var out []*rawRole
	d.pairs(v, "deployment.roles", func(k, v *yaml.Node) {
		name := k.Value
		if !validName(name) || strings.Contains(name, ".") {
			d.errorf(k, "deployment.roles: %q must be letters, digits, '_' or '-' (it names log and pid files, and {%s.host} refers to it)", name, name)
			return
		}
		if isNull(v) {
			out = append(out, &rawRole{name: name, at: d.pos(k), remove: true})
			return
		}
		out = append(out, d.role(name, k, v))
	})
	return out
}

// role decodes one role.
func (d *doc) role(name string, k, v *yaml.Node) *rawRole {
	r := &rawRole{name: name, at: d.pos(k)}
	what := "deployment.roles." + name
	d.mapping(v, what, map[string]field{
		"engine": func(_, v *yaml.Node) {
			if s, ok := d.str(v, what+".engine"); ok {
				if engine.Lookup(s) == nil {
					d.errorf(v, "%s.engine: unknown engine %q (want %s)", what, s, engine.NameList())
					return
				}
				r.engine, r.hasEngine = s, true
			}
		},
		"model": func(_, v *yaml.Node) {
			if s, ok := d.word(v, what+".model"); ok && s != "" {
				r.model, r.hasModel = s, true
			}
		},
		"launch": func(_, v *yaml.Node) {
			if w, ok := d.words(v, what+".launch"); ok {
				r.launch, r.hasLaunch, r.launchAt = w, true, d.pos(v)
			}
		},
		"args": func(_, v *yaml.Node) { r.args = d.args(v) },
		"env": func(_, v *yaml.Node) {
			d.env(v, what+".env", func(name, value string, remove bool, at position) {
				r.env = append(r.env, rawEnv{name: name, value: value, remove: remove, at: at})
			})
		},
		"count": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, what+".count", 1); ok && n >= 1 {
				if n > MaxRoleCount {
					d.errorf(v, "%s.count: %d is more than %d", what, n, MaxRoleCount)
					return
				}
				r.count, r.hasCount, r.countAt = n, true, d.pos(v)
			}
		},
		"node": func(_, v *yaml.Node) {
			if nodes, ok := d.roleNodes(v, what+".node"); ok {
				r.nodes, r.hasNode, r.nodeAt = nodes, true, d.pos(v)
			}
		},
		"gpus": func(_, v *yaml.Node) {
			if g, ok := d.roleGPUs(v, what+".gpus"); ok {
				r.gpus, r.hasGPUs, r.gpusAt = g, true, d.pos(v)
			}
		},
		"port": func(_, v *yaml.Node) {
			if n, ok := d.integer(v, what+".port"); ok {
				if n < 1 || n > maxPort {
					d.errorf(v, "%s.port: %d is out of range (1-%d)", what, n, maxPort)
					return
				}
				r.port, r.hasPort, r.portAt = n, true, d.pos(v)
			}
		},
		"health": func(_, v *yaml.Node) {
			if s, ok := d.word(v, what+".health"); ok {
				if s != HealthNone && (!strings.HasPrefix(s, "/") || strings.ContainsAny(s, " \t")) {
					d.errorf(v, "%s.health: %q: want a URL path starting with '/', or %s (no HTTP to poll)", what, s, HealthNone)
					return
				}
				r.health, r.hasHealth, r.healthAt = s, true, d.pos(v)
			}
		},
	})
	return r
}

// roleNodes decodes a role's node: one node for every instance, or a list
// with one node per instance.
func (d *doc) roleNodes(v *yaml.Node, what string) ([]int, bool) {
	one := func(n *yaml.Node, what string) (int, bool) {
		k, ok := d.intAtLeast(n, what, 0)
		if ok && k >= MaxRoleNodes {
			d.errorf(n, "%s: node %d: a launch spans at most %d nodes", what, k, MaxRoleNodes)
			return 0, false
		}
		return k, ok && k >= 0
	}
	if v.Kind == yaml.ScalarNode {
		k, ok := one(v, what)
		return []int{k}, ok
	}
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		d.errorf(v, "%s: want a node (0, 1, …) or a list with one node per instance, got %s", what, kindName(v))
		return nil, false
	}
	var out []int
	for i, n := range v.Content {
		k, ok := one(deref(n), fmt.Sprintf("%s[%d]", what, i))
		if !ok {
			return nil, false
		}
		out = append(out, k)
	}
	return out, true
}

// roleGPUs decodes a role's gpus: how many each instance is given (0: none,
// a process that runs on the CPU), or the device indices it is given.
func (d *doc) roleGPUs(v *yaml.Node, what string) (RoleGPUs, bool) {
	if v.Kind == yaml.ScalarNode {
		n, ok := d.intAtLeast(v, what, 0)
		if !ok || n < 0 {
			return RoleGPUs{}, false
		}
		if n == 0 {
			return RoleGPUs{None: true}, true
		}
		if n > MaxRoleGPUs {
			d.errorf(v, "%s: %d GPUs is more than %d", what, n, MaxRoleGPUs)
			return RoleGPUs{}, false
		}
		return RoleGPUs{Count: n}, true
	}
	// An empty list could be read as no GPU, or as a list left unfinished;
	// gpus: 0 says the first without doubt.
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		d.errorf(v, "%s: empty list; for a role that uses no GPU (a router), write gpus: 0", what)
		return RoleGPUs{}, false
	}
	list := distinctList(d, v, what, "GPU indices (0, 1, …)", "GPU",
		func(n *yaml.Node, what string) (int, int, string, bool) {
			k, ok := d.intAtLeast(n, what, 0)
			if !ok || k < 0 {
				return 0, 0, "", false
			}
			if k > MaxRoleGPUIdx {
				d.errorf(n, "%s: GPU %d is above %d", what, k, MaxRoleGPUIdx)
				return 0, 0, "", false
			}
			return k, k, fmt.Sprintf("GPU %d", k), true
		})
	if len(list) == 0 {
		return RoleGPUs{}, false
	}
	return RoleGPUs{List: list}, true
}

// mergeDeployment applies a file's `deployment:` to the one its parent
// resolved (nil when it has none): the serve role and rendezvous port
// replace the parent's, a role of the same name is changed key by key
// (args and env merged as a scenario's are, the rest replaced), a new role
// is added after the parent's, and `ROLE: null` removes one.
func mergeDeployment(parent *Deployment, raw *rawDeployment) *Deployment {
	if raw == nil {
		return parent.clone()
	}
	if raw.remove {
		return nil
	}
	d := parent.clone()
	if d == nil {
		d = &Deployment{src: &deploySrc{}}
	}
	d.src.at = raw.at
	if raw.hasServe {
		d.Serve, d.src.serveAt = raw.serve, raw.serveAt
	}
	if raw.hasRendezvous {
		d.RendezvousPort, d.src.rendezvousAt = raw.rendezvous, raw.rendezvousAt
	}
	if raw.hasFigures {
		d.Figures, d.src.figuresAt = raw.figures, raw.figuresAt
	}
	for _, rr := range raw.roles {
		i := slices.IndexFunc(d.Roles, func(r *Role) bool { return r.Name == rr.name })
		if rr.remove {
			if i >= 0 {
				d.Roles = slices.Delete(d.Roles, i, i+1)
			}
			continue
		}
		var r *Role
		if i >= 0 {
			r = d.Roles[i]
		} else {
			r = &Role{Name: rr.name, Count: 1, Env: map[string]string{},
				src: &roleSrc{argPos: map[string]position{}, envPos: map[string]position{}}}
			d.Roles = append(d.Roles, r)
		}
		r.apply(rr)
	}
	return d
}

// apply changes a role by what a file wrote about it.
func (r *Role) apply(rr *rawRole) {
	r.src.at = rr.at
	if rr.hasEngine {
		r.Engine = rr.engine
	}
	if rr.hasModel {
		r.Model = rr.model
	}
	if rr.hasLaunch {
		r.Launch, r.src.launchAt = rr.launch, rr.launchAt
	}
	if rr.hasCount {
		r.Count = rr.count
	}
	if rr.hasNode {
		r.Nodes, r.src.nodeAt = rr.nodes, rr.nodeAt
		if !rr.hasCount && len(rr.nodes) > 1 {
			r.Count = len(rr.nodes) // one instance per node listed
		}
	}
	if rr.hasGPUs {
		r.GPUs, r.src.gpusAt = rr.gpus, rr.gpusAt
	}
	if rr.hasPort {
		r.Port, r.src.portAt = rr.port, rr.portAt
	}
	if rr.hasHealth {
		r.Health, r.src.healthAt = rr.health, rr.healthAt
	}
	args := map[string]RoleArg{}
	for _, a := range r.Args {
		args[a.Key] = a
	}
	for _, a := range rr.args {
		args[a.arg.Key] = RoleArg{Arg: a.arg, Remove: a.remove}
		r.src.argPos[a.arg.Key] = a.at
	}
	r.Args = nil
	for _, k := range slices.Sorted(maps.Keys(args)) {
		r.Args = append(r.Args, args[k])
	}
	for _, v := range rr.env {
		if v.remove {
			delete(r.Env, v.name)
			if !slices.Contains(r.EnvRemove, v.name) {
				r.EnvRemove = append(r.EnvRemove, v.name)
			}
		} else {
			r.Env[v.name] = v.value
			r.EnvRemove = slices.DeleteFunc(r.EnvRemove, func(n string) bool { return n == v.name })
		}
		r.src.envPos[v.name] = v.at
	}
}

// finishDeployment checks a scenario's merged deployment: a role to serve,
// instances that fit their nodes, references to roles that exist and no
// cycle among them, and each role's server as a scenario's server is
// checked. A single node (one node: list per role) spans node 0.
func (l *loader) finishDeployment(s *Scenario) {
	dep := s.Deployment
	at := dep.src.at
	if len(dep.Roles) == 0 {
		l.p.errorf(at, "scenario %s: deployment.roles: empty (at least one role)", s.Name)
		return
	}
	if dep.Serve == "" {
		if len(dep.Roles) > 1 {
			l.p.errorf(at, "scenario %s: deployment.serve: missing (the role the load generator talks to: %s)", s.Name, roleNames(dep))
			return
		}
		dep.Serve = dep.Roles[0].Name
	}
	serve := dep.Role(dep.Serve)
	if serve == nil {
		l.p.errorf(dep.src.serveAt, "deployment.serve: %q is not a role of scenario %s (%s)", dep.Serve, s.Name, roleNames(dep))
		return
	}
	for _, r := range dep.Roles {
		l.finishRole(s, r)
	}
	switch {
	case serve.node(0) != 0:
		l.p.errorf(serve.src.nodeAt, "deployment.roles.%s.node: the role the load generator talks to (deployment.serve) runs its instance 0 on node 0, where the load runs", serve.Name)
	case serve.Health == HealthNone:
		l.p.errorf(serve.src.healthAt, "deployment.roles.%s.health: %s, but the load generator talks to this role over HTTP (deployment.serve)", serve.Name, HealthNone)
	}
	l.finishFigures(s)
	l.checkRefs(s)
	l.checkPlacement(s)
}

// finishFigures resolves and checks the role the engine's figures are read
// from (Deployment.Figures): written, it must be a role with an HTTP face;
// else the served role when it runs the engine's own server, or the engine
// role that generates when the served role is a program of its own (a
// router, launch:): under SGLang's prefill-decode disaggregation the decode
// worker, whose steps are the ones speculation and the batch are about.
func (l *loader) finishFigures(s *Scenario) {
	dep := s.Deployment
	if dep.src.figuresAt == (position{}) {
		// Not written here or by a parent: chosen anew, since a parent's
		// choice is over the parent's roles.
		dep.Figures = FiguresRole(dep)
		return
	}
	r := dep.Role(dep.Figures)
	switch {
	case r == nil:
		l.p.errorf(dep.src.figuresAt, "deployment.figures: %q is not a role of scenario %s (%s)", dep.Figures, s.Name, roleNames(dep))
	case r.Health == HealthNone:
		l.p.errorf(dep.src.figuresAt, "deployment.figures: role %s has health: %s, no HTTP face to read figures from", r.Name, HealthNone)
	case r.node(0) != dep.Role(dep.Serve).node(0):
		l.p.errorf(dep.src.figuresAt, "deployment.figures: role %s runs its instance 0 on node %d, not beside the load generator on node %d", r.Name, r.node(0), dep.Role(dep.Serve).node(0))
	}
}

// FiguresRole is the role a deployment's engine figures come from when
// `figures:` is not written: the served role, unless it runs a program of
// its own (launch:, a router), and then the role whose flags set
// disaggregation-mode decode, else the first engine role with an HTTP face
// beside it; the served role when there is none.
func FiguresRole(dep *Deployment) string {
	serve := dep.Role(dep.Serve)
	if serve == nil || len(serve.Launch) == 0 {
		return dep.Serve
	}
	var first string
	for _, r := range dep.Roles {
		if r == serve || len(r.Launch) > 0 || r.Health == HealthNone || r.node(0) != serve.node(0) {
			continue
		}
		for _, a := range r.Args {
			if !a.Remove && a.Key == "disaggregation-mode" && slices.Equal(a.Values, []string{"decode"}) {
				return r.Name
			}
		}
		if first == "" {
			first = r.Name
		}
	}
	if first == "" {
		return dep.Serve
	}
	return first
}

// roleNames lists a deployment's roles for a message.
func roleNames(d *Deployment) string {
	var names []string
	for _, r := range d.Roles {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

// finishRole checks one role: its nodes against its count, and its server
// as a scenario's (a model, a generic engine's command, no flag the
// launcher sets).
func (l *loader) finishRole(s *Scenario, r *Role) {
	what := "deployment.roles." + r.Name
	switch {
	case len(r.Nodes) > 1 && len(r.Nodes) != r.Count:
		l.p.errorf(r.src.nodeAt, "%s.node: %d nodes for %d instances (count); give one node, or one per instance", what, len(r.Nodes), r.Count)
	case len(r.Nodes) == 1 && r.Count > 1:
		r.Nodes = slices.Repeat(r.Nodes, r.Count)
	}
	if len(r.GPUs.List) > 0 && r.Count > 1 {
		seen := map[int]bool{}
		for i := range r.Count {
			if seen[r.node(i)] {
				l.p.errorf(r.src.gpusAt, "%s.gpus: %d instances on node %d would share GPUs %v; give a count (gpus: %d) to give each its own",
					what, r.Count, r.node(i), r.GPUs.List, len(r.GPUs.List))
				break
			}
			seen[r.node(i)] = true
		}
	}
	rs := s.RoleScenario(r)
	if rs.Engine == "" {
		rs.Engine = DefaultEngine
	}
	if len(rs.Launch) > 0 {
		return
	}
	if rs.Engine == engine.Generic {
		l.p.errorf(r.src.at, "%s: engine generic needs a launch command (`launch:`)", what)
		return
	}
	if rs.Model == "" {
		l.p.errorf(r.src.at, "%s: no model (set `model` in the role or the scenario)", what)
	}
	if p := rs.Profile(); p != nil {
		for _, a := range rs.Args {
			if by, ok := p.Reserved[a.Key]; ok {
				l.p.errorf(rs.src.argPos[a.Key], "args: %s is set by bakeoff for each instance of role %s (from %s); remove it", a.Key, r.Name, by)
			}
		}
	}
}

// roleWord is one word of a role's command or environment and where it was
// written.
type roleWord struct {
	w  string
	at position
}

// words are every word of the role's server that may hold a placeholder:
// its command, its flags' values, its variables.
func (s *Scenario) roleWords(r *Role) []roleWord {
	rs := s.RoleScenario(r)
	var out []roleWord
	for _, w := range rs.Launch {
		at := r.src.launchAt
		if len(r.Launch) == 0 {
			at = s.src.file
		}
		out = append(out, roleWord{w, at})
	}
	for _, a := range rs.Args {
		for _, v := range a.Values {
			out = append(out, roleWord{v, rs.src.argPos[a.Key]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.Env)) {
		out = append(out, roleWord{rs.Env[k], rs.src.envPos[k]})
	}
	return out
}

// Deps are the roles r refers to ({ROLE.host}, {ROLE.port}), which start,
// and become ready, before it; in role order.
func (s *Scenario) Deps(r *Role) []string {
	var out []string
	for _, w := range s.roleWords(r) {
		for _, ref := range roleRefs(w.w) {
			if ref.role != r.Name && !slices.Contains(out, ref.role) {
				out = append(out, ref.role)
			}
		}
	}
	return out
}

// checkRefs refuses a reference to a role or an instance that does not
// exist, and roles that wait for each other.
func (l *loader) checkRefs(s *Scenario) {
	dep := s.Deployment
	for _, r := range dep.Roles {
		for _, w := range s.roleWords(r) {
			for _, ref := range roleRefs(w.w) {
				target := dep.Role(ref.role)
				switch {
				case target == nil:
					l.p.errorf(w.at, "scenario %s, role %s: {%s.%s} names no role (%s)", s.Name, r.Name, ref.role, ref.attr, roleNames(dep))
				case ref.index >= target.Count:
					l.p.errorf(w.at, "scenario %s, role %s: {%s.%d.%s}: role %s has %d instance(s), 0 to %d", s.Name, r.Name,
						ref.role, ref.index, ref.attr, ref.role, target.Count, target.Count-1)
				case ref.attr == "port" && target.Health == HealthNone && target.Port == 0:
					l.p.errorf(w.at, "scenario %s, role %s: {%s.port}: role %s listens on no HTTP port (health: %s); give it a port:", s.Name, r.Name, ref.role, ref.role, HealthNone)
				}
			}
		}
	}
	if cycle := s.depCycle(); cycle != nil {
		l.p.errorf(dep.Role(cycle[0]).src.at, "scenario %s: roles wait for each other to be ready: %s (a role starts once the roles it refers to are ready; ranks of one group are one role with a count)",
			s.Name, strings.Join(cycle, " → "))
	}
}

// depCycle returns a cycle of role dependencies, or nil.
func (s *Scenario) depCycle() []string {
	dep := s.Deployment
	state := map[string]int{} // 1 on the stack, 2 done
	var stack []string
	var found []string
	var visit func(name string) bool
	visit = func(name string) bool {
		state[name] = 1
		stack = append(stack, name)
		r := dep.Role(name)
		if r != nil {
			for _, q := range s.Deps(r) {
				if dep.Role(q) == nil {
					continue
				}
				switch state[q] {
				case 1:
					i := slices.Index(stack, q)
					found = append(slices.Clone(stack[i:]), q)
					return true
				case 0:
					if visit(q) {
						return true
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = 2
		return false
	}
	for _, r := range dep.Roles {
		if state[r.Name] == 0 && visit(r.Name) {
			return found
		}
	}
	return nil
}

// StartOrder is the roles in waves: each wave's roles refer only to roles
// of earlier waves, so a wave starts once the waves before it are ready.
// Within a wave, roles keep file order.
func (s *Scenario) StartOrder() [][]*Role {
	dep := s.Deployment
	placed := map[string]bool{}
	var waves [][]*Role
	for len(placed) < len(dep.Roles) {
		var wave []*Role
		for _, r := range dep.Roles {
			if placed[r.Name] {
				continue
			}
			ready := true
			for _, q := range s.Deps(r) {
				if !placed[q] && dep.Role(q) != nil {
					ready = false
				}
			}
			if ready {
				wave = append(wave, r)
			}
		}
		if len(wave) == 0 { // a cycle, refused when loaded
			for _, r := range dep.Roles {
				if !placed[r.Name] {
					wave = append(wave, r)
				}
			}
		}
		for _, r := range wave {
			placed[r.Name] = true
		}
		waves = append(waves, wave)
	}
	return waves
}

// checkPlacement refuses instances that would share a port or a GPU on one
// node when both were written.
func (l *loader) checkPlacement(s *Scenario) {
	dep := s.Deployment
	ports := map[[2]int]string{}
	gpus := map[[2]int]*Role{}
	gpuUser := map[[2]int]string{}
	for _, r := range dep.Roles {
		for i := range r.Count {
			name := r.Name
			if r.Count > 1 {
				name = fmt.Sprintf("%s.%d", r.Name, i)
			}
			node := r.node(i)
			if r.Port > 0 {
				key := [2]int{node, r.Port + i}
				if other, dup := ports[key]; dup {
					l.p.errorf(r.src.portAt, "deployment.roles.%s.port: %s and %s would both listen on port %d of node %d", r.Name, other, name, r.Port+i, node)
				}
				ports[key] = name
			}
			for _, g := range r.GPUs.List {
				key := [2]int{node, g}
				// Instances of one role sharing its list are refused
				// with the role (finishRole).
				if other, dup := gpus[key]; dup && other != r {
					l.p.errorf(r.src.gpusAt, "deployment.roles.%s.gpus: %s and %s would both use GPU %d of node %d", r.Name, gpuUser[key], name, g, node)
				}
				gpus[key], gpuUser[key] = r, name
			}
		}
	}
}

// checkDeployments runs the checks of a campaign's deployments that need
// the campaign: the rendezvous port defaulted, and a launch that spans more
// nodes than the campaign has hosts refused.
func (l *loader) checkDeployments(c *Campaign, d *doc, nodes campaignNodes) {
	for _, s := range c.Scenarios {
		if s.Deployment == nil {
			continue
		}
		if s.Deployment.RendezvousPort == 0 {
			s.Deployment.RendezvousPort = DefaultRendezvousPort
		}
		n := s.Deployment.NodeCount()
		if n <= 1 {
			continue
		}
		have, where := 1, d.pos(nodes.host)
		switch {
		case len(c.Hosts) > 0:
			have, where = len(c.Hosts), d.pos(nodes.hosts)
		case c.Host.Slurm != nil:
			have = c.Host.Slurm.Nodes
			where = d.pos(deref(keyValue(deref(keyValue(deref(nodes.host), "slurm")), "nodes")))
			if where.line == 0 {
				where = d.pos(nodes.host)
			}
		}
		if have < n {
			l.p.errorf(where, "scenario %s spans %d nodes (%s), but the campaign has %s: give hosts: at least %d hosts, or host.slurm.nodes: %d",
				s.Name, n, s.Deployment.src.at, hostsWord(have, c), n, n)
		}
	}
}

// hostsWord says how many hosts a campaign has, for a message.
func hostsWord(n int, c *Campaign) string {
	switch {
	case len(c.Hosts) > 0:
		return fmt.Sprintf("a fleet of %d", n)
	case c.Host.Slurm != nil:
		return fmt.Sprintf("an allocation of %d node(s)", n)
	case c.Host.Local:
		return "one host (local)"
	}
	return "one host"
}

// roleCommands decodes engine.role_commands: by role name, the command that
// replaces the program of that role's launch.
func (d *doc) roleCommands(v *yaml.Node) (map[string][]string, map[string]position) {
	out, at := map[string][]string{}, map[string]position{}
	d.pairs(v, "engine.role_commands", func(k, v *yaml.Node) {
		if w := d.command(v, "engine.role_commands."+k.Value); w != nil {
			out[k.Value], at[k.Value] = w, d.pos(k)
		}
	})
	return out, at
}

// checkRoleCommands refuses an engine.role_commands entry that replaces
// nothing: no scenario has a role of that name with a launch of its own.
func (l *loader) checkRoleCommands(c *Campaign) {
	for _, name := range slices.Sorted(maps.Keys(c.Engine.RoleCommands)) {
		found := false
		for _, s := range c.Scenarios {
			if s.Deployment == nil {
				continue
			}
			if r := s.Deployment.Role(name); r != nil && len(r.Launch) > 0 {
				found = true
			}
		}
		if !found {
			l.p.errorf(c.Engine.roleCommandsAt[name], "engine.role_commands.%s: no scenario has a role %s with a launch of its own, whose program it would replace", name, name)
		}
	}
}

// launchWithCommand is a role's launch with its program (the words before
// the first --flag) replaced by command.
func launchWithCommand(launch, command []string) []string {
	i := slices.IndexFunc(launch, func(w string) bool { return strings.HasPrefix(w, "--") })
	if i < 0 {
		i = len(launch)
	}
	return append(slices.Clone(command), launch[i:]...)
}
