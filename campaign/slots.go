package campaign

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// Launches side by side on one host (launches_per_host: K): a host of eight
// GPUs runs a TP 2 comparison four launches at a time, each launch in a
// slot of its own: its processes get the GPUs of its slot (the deployment's
// gpus: shifted by the slot's GPU offset) and ports shifted by the slot's
// port offset, so no two slots share a GPU or a port. Every scenario must
// then say which GPUs each of its processes uses: a deployment whose roles
// all have gpus: (a single server is a deployment of one role; gpus: 0 for
// a process that uses none, such as a router).

const (
	// MaxLaunchesPerHost bounds launches_per_host.
	MaxLaunchesPerHost = 64
	// SlotPortStride is how far apart the ports of two slots are: slot k's
	// ports are its launch's own plus k × SlotPortStride. A launch's
	// instances must fit within it.
	SlotPortStride = 100
)

// SlotGPUs is how many GPUs one slot takes: the most GPU indices any of
// the campaign's launches uses (its highest index + 1). A role of gpus: 0
// adds none.
func (c *Campaign) SlotGPUs() int {
	n := 0
	for _, s := range c.Scenarios {
		if s.Deployment == nil {
			continue
		}
		for _, in := range s.Deployment.Instances(c.Engine.Port, Slot{}) {
			for _, g := range in.GPUs {
				n = max(n, g+1)
			}
		}
	}
	return n
}

// SlotOf is slot k (0-based) of a host.
func (c *Campaign) SlotOf(k int) Slot {
	return Slot{PortOffset: k * SlotPortStride, GPUOffset: k * c.SlotGPUs()}
}

// checkSlots refuses launches side by side that could meet on a GPU or a
// port: a scenario that does not say which GPUs each of its processes
// uses, a launch over several nodes, a launch whose ports do not fit a
// slot.
func (l *loader) checkSlots(c *Campaign, d *doc, nodes campaignNodes) {
	if c.LaunchesPerHost <= 1 {
		return
	}
	at := d.pos(nodes.launchesPerHost)
	for _, s := range c.Scenarios {
		if s.Deployment == nil {
			l.p.errorf(at, "launches_per_host: %d launches share each host, so each must say which GPUs it uses, and scenario %s is one server without them: write it as a deployment of one role with gpus: (deployment: {roles: {server: {gpus: N}}})",
				c.LaunchesPerHost, s.Name)
			continue
		}
		if n := s.Deployment.NodeCount(); n > 1 {
			l.p.errorf(at, "launches_per_host: scenario %s spans %d nodes; launches side by side share one host each", s.Name, n)
			continue
		}
		for _, r := range s.Deployment.Roles {
			if !r.GPUs.Set() {
				l.p.errorf(r.src.at, "deployment.roles.%s: launches_per_host is %d (%s), so each role says which GPUs it uses: give it gpus: (gpus: 0 for a role that uses none, such as a router)",
					r.Name, c.LaunchesPerHost, at)
			}
		}
		var ports []int
		for _, in := range s.Deployment.Instances(c.Engine.Port, Slot{}) {
			ports = append(ports, in.Port)
		}
		if len(ports) > 0 && slices.Max(ports)-slices.Min(ports) >= SlotPortStride {
			l.p.errorf(s.Deployment.src.at, "scenario %s: its ports %d to %d span more than a slot's %d (launches_per_host: %d)",
				s.Name, slices.Min(ports), slices.Max(ports), SlotPortStride, c.LaunchesPerHost)
		}
		for _, r := range s.Deployment.Roles {
			if rs := s.RoleScenario(r); defaultBootstrap(rs) {
				l.p.errorf(rs.src.argPos["disaggregation-mode"], "scenario %s, role %s: an SGLang prefill worker listens on its bootstrap port, %d unless told otherwise, so the launches side by side on a host (launches_per_host: %d) would all use it: give it disaggregation-bootstrap-port: \"{port:%d}\" (and the router {port:%d} after its --prefill URL)",
					s.Name, r.Name, sglangBootstrapPort, c.LaunchesPerHost, sglangBootstrapPort, sglangBootstrapPort)
			}
			for _, w := range s.portWords(r) {
				if p, ok := literalPort(w.key, w.w); ok {
					l.p.errorf(w.at, "scenario %s, role %s: %s: port %d is written as a number, so the launches side by side on a host (launches_per_host: %d) would all use it: write {port:%d}, port %d of each slot (%d, %d, …), or {port}, {ROLE.port} or {rendezvous} for the ports bakeoff gives",
						s.Name, r.Name, w.what(), p, c.LaunchesPerHost, p, p, p, p+SlotPortStride)
				}
			}
		}
	}
	l.checkSlotPorts(c)
}

// sglangBootstrapPort is SGLang's --disaggregation-bootstrap-port when not
// given: where a prefill worker's bootstrap server listens for its decode
// peers (sgl-project/sglang python/sglang/srt/server_args.py).
const sglangBootstrapPort = 8998

// defaultBootstrap reports whether rs, a role's server, is an SGLang
// prefill worker left on the default bootstrap port: a port no word of it
// writes, which every slot's prefill worker would open.
func defaultBootstrap(rs *Scenario) bool {
	if len(rs.Launch) > 0 || (rs.Engine != "" && rs.Engine != engine.SGLang) {
		return false
	}
	mode, _ := rs.flagValue("disaggregation-mode")
	_, port := rs.flagValue("disaggregation-bootstrap-port")
	return mode == "prefill" && !port
}

// slotPort is a port one launch uses, as its slot 1 has it, and where it
// was written.
type slotPort struct {
	port     int
	scenario string
	what     string
	at       position
}

// checkSlotPorts refuses ports that slots would share: each slot adds
// SlotPortStride to every port of its launch, so a port of one launch that
// lies a multiple of the stride above another's (of any scenario: the slots
// run any rounds at once) is the same port in two slots. A port the last
// slot would push past 65535 is refused too.
func (l *loader) checkSlotPorts(c *Campaign) {
	k := c.LaunchesPerHost
	var all []slotPort
	for _, s := range c.Scenarios {
		all = append(all, s.launchPorts(c.Engine.Port)...)
	}
	seen := map[[2]int]bool{}
	for _, a := range all {
		if top := a.port + (k-1)*SlotPortStride; top > maxPort {
			if !seen[[2]int{a.port, 0}] {
				seen[[2]int{a.port, 0}] = true
				l.p.errorf(a.at, "scenario %s: port %d (%s) is %d in slot %d, above %d (launches_per_host: %d)", a.scenario, a.port, a.what, top, k, maxPort, k)
			}
		}
		for _, b := range all {
			d := a.port - b.port
			if d <= 0 || d%SlotPortStride != 0 || d/SlotPortStride >= k || seen[[2]int{a.port, b.port}] {
				continue
			}
			seen[[2]int{a.port, b.port}] = true
			l.p.errorf(a.at, "scenario %s: port %d (%s) is port %d (%s of scenario %s, %s) shifted into slot %d: launches side by side would share it (launches_per_host: %d, each slot's ports %d above the last's); move one by other than a multiple of %d",
				a.scenario, a.port, a.what, b.port, b.what, b.scenario, b.at, 1+d/SlotPortStride, k, SlotPortStride, SlotPortStride)
		}
	}
}

// launchPorts are the ports one launch of s uses in slot 1, with where each
// was written: its instances', {rendezvous} when a word uses it, and every
// {port:N}.
func (s *Scenario) launchPorts(base int) []slotPort {
	dep := s.Deployment
	if dep == nil {
		return nil
	}
	var out []slotPort
	for _, in := range dep.Instances(base, Slot{}) {
		at := in.Role.src.at
		if in.Role.Port > 0 {
			at = in.Role.src.portAt
		}
		out = append(out, slotPort{in.Port, s.Name, in.Name() + "'s own", at})
	}
	rendezvous := false
	for _, r := range dep.Roles {
		for _, w := range s.roleWords(r) {
			rendezvous = rendezvous || strings.Contains(w.w, TokenRendezvous)
			for _, p := range slotPorts(w.w) {
				out = append(out, slotPort{p, s.Name, fmt.Sprintf("{port:%d} of role %s", p, r.Name), w.at})
			}
		}
	}
	if rendezvous {
		at := dep.src.rendezvousAt
		if dep.RendezvousPort == 0 || at.file == "" {
			at = dep.src.at
		}
		out = append(out, slotPort{dep.Rendezvous(Slot{}), s.Name, "{rendezvous}", at})
	}
	return out
}

// portWord is a word of a role's server with what it is the value of: a
// flag of its command or its args, or a variable.
type portWord struct {
	kind, key, w string
	at           position
}

// what names the word in a message: "args.disaggregation-bootstrap-port",
// "env.MASTER_PORT", "launch: --port 30000".
func (w portWord) what() string {
	if w.kind == "launch" {
		return strings.TrimSpace("launch: " + w.key + " " + w.w)
	}
	return w.kind + "." + w.key
}

// portWords are the words of the role's server that may hold a port, each
// with the flag or variable it is the value of.
func (s *Scenario) portWords(r *Role) []portWord {
	rs := s.RoleScenario(r)
	var out []portWord
	at := r.src.launchAt
	if len(r.Launch) == 0 {
		at = s.src.file
	}
	for i, w := range rs.Launch {
		key := ""
		if k, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(k, "-") {
			key, w = k, v
		} else if i > 0 && strings.HasPrefix(rs.Launch[i-1], "-") {
			key = rs.Launch[i-1]
		}
		out = append(out, portWord{"launch", key, w, at})
	}
	for _, a := range rs.Args {
		for _, v := range a.Values {
			out = append(out, portWord{"args", a.Key, v, rs.src.argPos[a.Key]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.Env)) {
		out = append(out, portWord{"env", k, rs.Env[k], rs.src.envPos[k]})
	}
	return out
}

// hostPortRe matches HOST:PORT with the port written as a number, in an
// address (`{ranks.host}:5000`, `10.0.0.1:5000`) or a URL
// (`http://{prefill.host}:30001/v1`); not a JSON value's `"key":1`.
var hostPortRe = regexp.MustCompile(`[A-Za-z0-9_.\-\]}]:([0-9]{1,5})(?:[/?#,;\s]|$)`)

// literalPort is the port w writes as a number, as the value of flag or
// variable key: a flag or variable named for a port (`--port`, `nccl-port`,
// `MASTER_PORT`) whose value is a number, or a HOST:PORT anywhere.
func literalPort(key, w string) (int, bool) {
	name := strings.ToLower(strings.TrimLeft(key, "-"))
	if strings.HasSuffix(name, "port") && w != "" && strings.Trim(w, "0123456789") == "" {
		if p, err := strconv.Atoi(w); err == nil && p >= 1 && p <= maxPort {
			return p, true
		}
	}
	if m := hostPortRe.FindStringSubmatch(w); m != nil {
		if p, err := strconv.Atoi(m[1]); err == nil && p >= 1 && p <= maxPort {
			return p, true
		}
	}
	return 0, false
}
