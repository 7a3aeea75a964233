package campaign

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Deployment is a scenario served by several processes, its roles: the ranks
// of one model spread over several nodes (SGLang's --nnodes, --node-rank,
// --dist-init-addr), prefill and decode workers behind a router (SGLang's
// --disaggregation-mode and sglang_router), or both. The roles are launched,
// watched and stopped as one; the load generator talks to one of them
// (Serve). A scenario without `deployment:` is one server, as it always was.
type Deployment struct {
	// Serve is the role the load generator talks to (its instance 0): rank
	// 0 of a multi-node group, or the router.
	Serve string
	// Figures is the role whose instance 0 the engine's own figures of a
	// level are read from (its /metrics and info call: the accept length,
	// the server's counts and timeline), when the served role is not an
	// engine: SGLang's router serves neither (docs/ENGINES.md). Written as
	// `figures:`, else FiguresRole's choice; "" while unresolved.
	Figures string
	// RendezvousPort is what {rendezvous} expands to: the port node 0 of a
	// multi-node group listens on for the others (SGLang's --dist-init-addr
	// HOST:PORT). 0 until defaulted (DefaultRendezvousPort).
	RendezvousPort int
	// Roles are in file order (a parent's first, then those a child adds).
	Roles []*Role

	src *deploySrc
}

// deploySrc is where a deployment's own keys were written.
type deploySrc struct {
	at, serveAt, rendezvousAt, figuresAt position
}

// Role is one kind of process of a deployment, as written: what it changes
// from the scenario it belongs to (RoleScenario applies it), how many
// instances run, where, on which GPUs and port, and how its readiness is
// read.
type Role struct {
	Name string
	// Engine and Model, when set, replace the scenario's; Launch replaces
	// the whole command, and then the role starts from no args of the
	// scenario's (a router takes none of the model server's flags).
	Engine, Model string
	Launch        []string
	// Args are the role's flags over the scenario's (or alone, with
	// Launch): a Remove entry drops an inherited flag. Env likewise, an
	// empty value with EnvRemove listing the name dropping a variable.
	Args      []RoleArg
	Env       map[string]string
	EnvRemove []string
	// Count is how many instances run (the ranks of a multi-node group,
	// several decode workers); each gets {index}.
	Count int
	// Nodes is the node of the deployment each instance runs on (0-based;
	// one entry per instance), all 0 unless written.
	Nodes []int
	// GPUs is the GPUs each instance is given (CUDA_VISIBLE_DEVICES).
	GPUs RoleGPUs
	// Port is the first instance's port (instance i listens on Port+i); 0:
	// assigned from engine.port (Instances).
	Port int
	// Health is the path polled for the role's readiness, engine.health_path
	// when empty; HealthNone for a process with no HTTP face (a headless
	// node): it counts as ready while it runs.
	Health string

	src *roleSrc
}

// RoleArg is one flag a role sets or removes.
type RoleArg struct {
	Arg
	Remove bool
}

// RoleGPUs says which GPUs an instance of a role is given: none written
// (the process sees every GPU of its host, and counts as the engine's
// parallelism says), no GPU at all (a router, which runs on the CPU),
// Count devices chosen on its node, or the devices listed.
type RoleGPUs struct {
	// None is gpus: 0: the process sees no GPU (an empty
	// CUDA_VISIBLE_DEVICES), holds none and takes none of a slot's, so
	// that a CPU-only role need not take a GPU only to say which it uses.
	None  bool
	Count int   // gpus: N
	List  []int // gpus: [i, j, …]
}

// Set reports whether the role says which GPUs it uses (gpus: 0 says it
// uses none).
func (g RoleGPUs) Set() bool { return g.None || g.Count > 0 || len(g.List) > 0 }

// PerInstance is how many GPUs an instance is given (0 when not written).
func (g RoleGPUs) PerInstance() int {
	if len(g.List) > 0 {
		return len(g.List)
	}
	return g.Count
}

// HealthNone is a role's `health: none`: no HTTP readiness to poll.
const HealthNone = "none"

// DefaultRendezvousPort is {rendezvous}, the port node 0 of a multi-node
// group listens on for the others, as SGLang's multi-node examples write
// --dist-init-addr HOST:5000 (sgl-project/sglang
// docs/references/multi_node_deployment.md).
const DefaultRendezvousPort = 5000

// roleSrc is where a role's values were written.
type roleSrc struct {
	at       position            // the role's key
	argPos   map[string]position // by arg key
	envPos   map[string]position // by variable name
	launchAt position
	gpusAt   position
	nodeAt   position
	portAt   position
	healthAt position
}

// clone copies a deployment so that finishing one scenario cannot change
// another that extends the same parent.
func (d *Deployment) clone() *Deployment {
	if d == nil {
		return nil
	}
	c := *d
	c.Roles = make([]*Role, len(d.Roles))
	for i, r := range d.Roles {
		c.Roles[i] = r.clone()
	}
	if d.src != nil {
		src := *d.src
		c.src = &src
	}
	return &c
}

func (r *Role) clone() *Role {
	c := *r
	c.Launch = slices.Clone(r.Launch)
	c.Args = make([]RoleArg, len(r.Args))
	for i, a := range r.Args {
		a.Values = slices.Clone(a.Values)
		c.Args[i] = a
	}
	c.Env = maps.Clone(r.Env)
	c.EnvRemove = slices.Clone(r.EnvRemove)
	c.Nodes = slices.Clone(r.Nodes)
	c.GPUs.List = slices.Clone(r.GPUs.List)
	if r.src != nil {
		src := *r.src
		src.argPos = maps.Clone(r.src.argPos)
		src.envPos = maps.Clone(r.src.envPos)
		c.src = &src
	}
	return &c
}

// Role returns the role named name, or nil.
func (d *Deployment) Role(name string) *Role {
	for _, r := range d.Roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// NodeCount is how many nodes (hosts) one launch of the deployment spans.
func (d *Deployment) NodeCount() int {
	n := 1
	for _, r := range d.Roles {
		for _, k := range r.Nodes {
			n = max(n, k+1)
		}
	}
	return n
}

// NodesPerLaunch is how many hosts one launch of the scenario needs: 1 for
// a scenario of one server.
func (s *Scenario) NodesPerLaunch() int {
	if s.Deployment == nil {
		return 1
	}
	return s.Deployment.NodeCount()
}

// NodesPerLaunch is the most hosts any of the campaign's launches needs: a
// fleet (or a Slurm allocation) is taken that many hosts at a time, and every
// round runs whole on one such group.
func (c *Campaign) NodesPerLaunch() int {
	n := 1
	for _, s := range c.Scenarios {
		n = max(n, s.NodesPerLaunch())
	}
	return n
}

// RoleScenario is the server one role runs: the scenario with the role's
// engine, model, command, flags and variables applied, named
// SCENARIO.ROLE. It is what Render renders and the engine's checks read.
func (s *Scenario) RoleScenario(r *Role) *Scenario {
	rs := s.clone()
	rs.Deployment = nil
	rs.Name = s.Name + "." + r.Name
	if r.Engine != "" {
		rs.Engine = r.Engine
	}
	if r.Model != "" {
		rs.Model = r.Model
	}
	args := map[string]Arg{}
	if len(r.Launch) > 0 {
		rs.Launch = slices.Clone(r.Launch)
		if rs.src != nil {
			rs.src.argPos = map[string]position{}
		}
	} else {
		for _, a := range rs.Args {
			args[a.Key] = a
		}
	}
	for _, a := range r.Args {
		if a.Remove {
			delete(args, a.Key)
			continue
		}
		args[a.Key] = a.Arg
		if rs.src != nil && r.src != nil {
			rs.src.argPos[a.Key] = r.src.argPos[a.Key]
		}
	}
	rs.Args = nil
	for _, k := range slices.Sorted(maps.Keys(args)) {
		rs.Args = append(rs.Args, args[k])
	}
	for _, k := range r.EnvRemove {
		delete(rs.Env, k)
	}
	for k, v := range r.Env {
		rs.Env[k] = v
		if rs.src != nil && r.src != nil {
			rs.src.envPos[k] = r.src.envPos[k]
		}
	}
	rs.GPUCount = r.GPUs.PerInstance()
	return rs
}

// Instance is one process of a deployment: a role's instance, where it runs
// and what it listens on.
type Instance struct {
	Role  *Role
	Index int // within its role, 0-based: {index}
	// Node is the deployment's node it runs on (0-based).
	Node int
	// Port is the port it listens on: {port}, and what {ROLE.port} names.
	Port int
	// GPUs are the device indices it is given (CUDA_VISIBLE_DEVICES); nil
	// when its role does not say (it sees every GPU of its node), empty
	// when its role has gpus: 0 (it sees none).
	GPUs []int
}

// Name names the instance in messages, files and pid files: the role's
// name, with ".INDEX" when the role has several instances ("ranks.1").
func (in Instance) Name() string {
	if in.Role.Count > 1 {
		return in.Role.Name + "." + strconv.Itoa(in.Index)
	}
	return in.Role.Name
}

// Slot is a launch's share of its hosts when launches run side by side on
// one host (docs/CONFIG.md, Sharing a host): the offsets its ports and GPU
// indices get. The zero Slot is a launch that has its hosts to itself.
type Slot struct {
	// PortOffset is added to every port (the instances' and the rendezvous
	// port), GPUOffset to every GPU index, so that launches side by side on
	// one host use disjoint ports and GPUs.
	PortOffset, GPUOffset int
}

// Instances lays the deployment's roles out as processes, in role order
// and then by index: each on its node, with its port (the role's port + its
// index, or the next port from basePort that no other instance of the node
// takes) and its GPUs (the listed ones, or Count devices of its node that no
// listed role takes, in order).
func (d *Deployment) Instances(basePort int, sl Slot) []Instance {
	taken := map[[2]int]bool{} // node, port
	for _, r := range d.Roles {
		if r.Port == 0 {
			continue
		}
		for i := range r.Count {
			taken[[2]int{r.node(i), r.Port + i}] = true
		}
	}
	if d.RendezvousPort > 0 {
		taken[[2]int{0, d.RendezvousPort}] = true
	}
	used := map[[2]int]bool{} // node, GPU
	for _, r := range d.Roles {
		for i := range r.Count {
			for _, g := range r.GPUs.List {
				used[[2]int{r.node(i), g}] = true
			}
		}
	}
	next := map[int]int{}    // node → next free port
	nextGPU := map[int]int{} // node → next GPU to look at
	var out []Instance
	for _, r := range d.Roles {
		for i := range r.Count {
			in := Instance{Role: r, Index: i, Node: r.node(i)}
			if r.Port > 0 {
				in.Port = r.Port + i
			} else {
				p, ok := next[in.Node]
				if !ok {
					p = basePort
				}
				for taken[[2]int{in.Node, p}] {
					p++
				}
				taken[[2]int{in.Node, p}] = true
				in.Port, next[in.Node] = p, p+1
			}
			switch {
			case r.GPUs.None:
				in.GPUs = []int{}
			case len(r.GPUs.List) > 0:
				in.GPUs = slices.Clone(r.GPUs.List)
			case r.GPUs.Count > 0:
				g := nextGPU[in.Node]
				for len(in.GPUs) < r.GPUs.Count {
					if !used[[2]int{in.Node, g}] {
						used[[2]int{in.Node, g}] = true
						in.GPUs = append(in.GPUs, g)
					}
					g++
				}
				nextGPU[in.Node] = g
			}
			in.Port += sl.PortOffset
			for k := range in.GPUs {
				in.GPUs[k] += sl.GPUOffset
			}
			out = append(out, in)
		}
	}
	return out
}

// node is the node instance i of the role runs on.
func (r *Role) node(i int) int {
	if i < len(r.Nodes) {
		return r.Nodes[i]
	}
	return 0
}

// Rendezvous is the rendezvous port of a launch in slot sl.
func (d *Deployment) Rendezvous(sl Slot) int {
	p := d.RendezvousPort
	if p == 0 {
		p = DefaultRendezvousPort
	}
	return p + sl.PortOffset
}

// GPUs is what one launch of the deployment holds: the sum over its roles of
// each role's count times the GPUs of one instance, which is the role's
// `gpus:` when written, else what the role's server counts as one scenario
// does (Scenario.GPUs) divided by SGLang's --nnodes, over which one server's
// tensor-parallel ranks are split (sgl-project/sglang
// python/sglang/srt/server_args.py, nnodes). A role with gpus: 0, or with
// a command of its own and no `gpus:` (a router), holds none.
func (d *Deployment) GPUs(s *Scenario) int {
	n := 0
	for _, r := range d.Roles {
		per := r.GPUs.PerInstance()
		if per == 0 && !r.GPUs.None && len(r.Launch) == 0 {
			rs := s.RoleScenario(r)
			per = rs.GPUs()
			if v, ok := rs.flagValue("nnodes"); ok {
				v = strings.ReplaceAll(v, TokenCount, strconv.Itoa(r.Count))
				if k, err := strconv.Atoi(v); err == nil && k > 1 {
					per = max(1, per/k)
				}
			}
		}
		n += r.Count * per
	}
	return n
}

// Placeholders a role's words may hold, expanded for each instance at its
// launch (docs/CONFIG.md, Deployments). {ROLE.host} and {ROLE.port} are
// instance 0 of ROLE, {ROLE.N.host} and {ROLE.N.port} instance N.
const (
	TokenHost       = "{host}"       // the address this instance listens on
	TokenIndex      = "{index}"      // this instance's index in its role
	TokenCount      = "{count}"      // how many instances its role has
	TokenRendezvous = "{rendezvous}" // the deployment's rendezvous port
)

// slotPortRe matches {port:N}: port N of the launch's slot, N plus the
// slot's port offset, for a port the engine takes from a flag of its own
// (SGLang's --disaggregation-bootstrap-port, an NCCL or a metrics port),
// which bakeoff does not otherwise give: written as a number, it would be
// the same port in every slot of a host (launches_per_host).
var slotPortRe = regexp.MustCompile(`\{port:([0-9]{1,5})\}`)

// expandSlotPorts writes every {port:N} of w as N + offset.
func expandSlotPorts(w string, offset int) string {
	if !strings.Contains(w, "{port:") {
		return w
	}
	return slotPortRe.ReplaceAllStringFunc(w, func(m string) string {
		n, _ := strconv.Atoi(slotPortRe.FindStringSubmatch(m)[1])
		return strconv.Itoa(n + offset)
	})
}

// slotPorts are the ports N of the {port:N} in w, as written.
func slotPorts(w string) []int {
	var out []int
	for _, m := range slotPortRe.FindAllStringSubmatch(w, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// roleRefRe matches a reference to another role's instance: {ROLE.host},
// {ROLE.port}, {ROLE.N.host}, {ROLE.N.port}. Braces that are not one (a JSON
// value of an engine flag) are left alone.
var roleRefRe = regexp.MustCompile(`\{([A-Za-z0-9_-]+)(?:\.([0-9]+))?\.(host|port)\}`)

// roleRef is one {ROLE.…} reference found in a word.
type roleRef struct {
	role  string
	index int
	attr  string
}

// roleRefs lists the role references in w.
func roleRefs(w string) []roleRef {
	var out []roleRef
	for _, m := range roleRefRe.FindAllStringSubmatch(w, -1) {
		ref := roleRef{role: m[1], attr: m[3]}
		if m[2] != "" {
			ref.index, _ = strconv.Atoi(m[2])
		}
		out = append(out, ref)
	}
	return out
}

// Addresses are the addresses of a launch's nodes as the other nodes reach
// them, by node: what {host} and {ROLE.host} expand to.
type Addresses func(node int) string

// expander is the placeholder expansion for instance self among insts, a
// launch in slot sl: every port it writes is the slot's.
func expander(insts []Instance, self Instance, addr Addresses, rendezvous int, sl Slot) func(string) string {
	find := func(role string, index int) (Instance, bool) {
		for _, in := range insts {
			if in.Role.Name == role && in.Index == index {
				return in, true
			}
		}
		return Instance{}, false
	}
	return func(w string) string {
		if !strings.Contains(w, "{") {
			return w
		}
		w = roleRefRe.ReplaceAllStringFunc(w, func(m string) string {
			ref := roleRefs(m)[0]
			in, ok := find(ref.role, ref.index)
			if !ok {
				return m // refused when the scenario was loaded
			}
			if ref.attr == "host" {
				return addr(in.Node)
			}
			return strconv.Itoa(in.Port)
		})
		w = strings.ReplaceAll(w, TokenHost, addr(self.Node))
		w = strings.ReplaceAll(w, TokenPort, strconv.Itoa(self.Port))
		w = strings.ReplaceAll(w, TokenIndex, strconv.Itoa(self.Index))
		w = strings.ReplaceAll(w, TokenCount, strconv.Itoa(self.Role.Count))
		w = expandSlotPorts(w, sl.PortOffset)
		return strings.ReplaceAll(w, TokenRendezvous, strconv.Itoa(rendezvous))
	}
}

// RenderInstance builds the launch of instance i of insts, a launch of
// scenario s's deployment in slot sl, on the host whose paths on gives:
// the role's server (RoleScenario) rendered as Render renders a scenario,
// listening on its node's address and its own port, its GPUs in
// CUDA_VISIBLE_DEVICES (set empty for a role of gpus: 0, which CUDA reads
// as no device, where unset would be every device), and every placeholder
// of its words expanded.
func RenderInstance(c *Campaign, s *Scenario, insts []Instance, i int, sl Slot, on On, addr Addresses) (*Launch, error) {
	if s == nil || s.Deployment == nil || i < 0 || i >= len(insts) {
		return nil, fmt.Errorf("render: no instance %d of a deployment", i)
	}
	in := insts[i]
	rs := s.RoleScenario(in.Role)
	rs.Name = s.Name + "." + in.Name()
	if cmd, ok := c.Engine.RoleCommands[in.Role.Name]; ok && len(in.Role.Launch) > 0 {
		rs.Launch = launchWithCommand(rs.Launch, cmd)
	}
	if in.GPUs != nil {
		ids := make([]string, len(in.GPUs))
		for k, g := range in.GPUs {
			ids[k] = strconv.Itoa(g)
		}
		rs.Env[cudaVisibleDevices] = strings.Join(ids, ",")
	}
	on.Port, on.Listen = in.Port, addr(in.Node)
	on.Expand = expander(insts, in, addr, s.Deployment.Rendezvous(sl), sl)
	return Render(c, rs, on)
}

// LocalAddresses are the addresses of a launch whose nodes are all this
// one host: every role listens on the loopback, as a single server does.
func LocalAddresses(int) string { return launcherHost }
