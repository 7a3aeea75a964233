package campaign

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
)

// Load reads a campaign file and every scenario it names, resolves
// `extends`, applies defaults and runs every check. When anything is wrong it
// returns *Errors holding all problems of all files; warnings go to
// Campaign.Warnings.
//
// A scenario named NAME is <config dir>/../scenarios/NAME.yaml (the
// `scenarios` folder beside the config's folder); a reference with a slash or
// a .yaml suffix is a path relative to the config file.
func Load(path string) (*Campaign, error) {
	return load(path, os.ReadFile)
}

func load(path string, read func(string) ([]byte, error)) (*Campaign, error) {
	l := newLoader(read)
	c := l.campaign(path)
	if err := l.p.err(); err != nil {
		return nil, err
	}
	l.foldPointWarnings(c)
	c.Warnings = l.p.warningStrings()
	return c, nil
}

// defaultLocalWorkdir is <TMPDIR>/bakeoff-local-<uid>.
func defaultLocalWorkdir() string {
	return filepath.Join(os.TempDir(), LocalWorkdirPrefix+strconv.Itoa(os.Getuid()))
}

// campaignNodes keeps the positions the cross-file checks report at.
type campaignNodes struct {
	root               position // where the file's top-level mapping starts
	baseline, requests *yaml.Node
	scenarios, prompts *yaml.Node
	sweep              *yaml.Node
	rates, burstiness  *yaml.Node
	speeds, trace      *yaml.Node
	selectKey          *yaml.Node
	question           *yaml.Node
	envAt              map[string]position
	host, hosts        *yaml.Node
	engine             *yaml.Node
	gpu, power         *yaml.Node
	budget, deadline   *yaml.Node
	launchesPerHost    *yaml.Node
}

func (l *loader) campaign(path string) *Campaign {
	c := &Campaign{
		File: path,
		Engine: EngineOpts{
			Port:          DefaultPort,
			HealthPath:    DefaultHealthPath,
			HealthTimeout: DefaultHealthTimeout,
			PollInterval:  DefaultPollInterval,
			StopGrace:     DefaultStopGrace,
			Env:           map[string]string{},
		},
		GPU:                  GPUOpts{MaxUsedMiB: DefaultMaxUsedMiB, WaitTimeout: DefaultGPUWaitTimeout},
		Power:                PowerOpts{Source: DefaultPowerSource, Interval: DefaultPowerInterval},
		Rounds:               DefaultRounds,
		LaunchesPerHost:      1,
		MinEffectPct:         DefaultMinEffectPct,
		EquivalenceMarginPct: DefaultEquivalenceMarginPct,
		Sweep: Sweep{
			MaxTokens:      DefaultMaxTokens,
			Warmup:         DefaultWarmup,
			Prompts:        DefaultPrompts,
			OutputLengths:  DefaultOutputLengths,
			Temperature:    DefaultTemperature,
			IgnoreEOS:      DefaultIgnoreEOS,
			Endpoint:       DefaultEndpoint,
			Repeats:        DefaultRepeats,
			Seed:           DefaultSeed,
			RequestTimeout: DefaultRequestTimeout,
			ScrapeInterval: DefaultScrapeInterval,
		},
	}
	l.p.seeFile(path)
	data, err := l.read(path)
	if err != nil {
		l.p.errorf(position{file: path}, "reading campaign: %s", readMsg(err))
		return nil
	}
	d := &doc{file: path, p: l.p}
	root := d.parse(data)
	if root == nil {
		return nil
	}
	nodes := campaignNodes{envAt: map[string]position{}}
	var hasHost, hasSweep bool
	var fleet []string // hosts:, when given
	fleetGiven := hasKey(root, "hosts")
	var levelKeys []string // sweep.concurrency and sweep.rates, when given
	d.mapping(root, "campaign file", map[string]field{
		"campaign": func(_, v *yaml.Node) {
			if s, ok := d.str(v, "campaign"); ok {
				if !validName(s) {
					d.errorf(v, "campaign: %q must be letters, digits, '.', '_' or '-' (it names a results directory)", s)
				}
				c.Name = s
			}
		},
		"host":  func(_, v *yaml.Node) { hasHost, nodes.host = true, v; d.host(v, &c.Host, fleetGiven) },
		"hosts": func(_, v *yaml.Node) { nodes.hosts = v; fleet = d.hosts(v) },
		"engine": func(_, v *yaml.Node) {
			nodes.engine = v
			d.engine(v, &c.Engine, nodes.envAt)
		},
		"gpu":   func(_, v *yaml.Node) { nodes.gpu = v; d.gpu(v, &c.GPU) },
		"power": func(_, v *yaml.Node) { nodes.power = v; d.power(v, &c.Power) },
		"sweep": func(_, v *yaml.Node) {
			hasSweep, nodes.sweep = true, v
			levelKeys = d.sweep(v, &c.Sweep, &nodes)
		},
		"baseline": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "baseline"); ok {
				c.Baseline, nodes.baseline = s, v
			}
		},
		"scenarios": func(_, v *yaml.Node) { nodes.scenarios = v },
		"rounds":    func(_, v *yaml.Node) { d.rounds(v, c) },
		"min_effect": func(_, v *yaml.Node) {
			if x, ok := d.percent(v, "min_effect"); ok {
				c.MinEffectPct = x
			}
		},
		"equivalence_margin": func(_, v *yaml.Node) {
			if x, ok := d.percent(v, "equivalence_margin"); ok {
				if x == 0 {
					d.errorf(v, "equivalence_margin: must be more than 0%% (no two measurements are ever exactly equal)")
				}
				c.EquivalenceMarginPct = x
			}
		},
		"slo":      func(_, v *yaml.Node) { c.SLO = d.slo(v) },
		"verdict":  func(_, v *yaml.Node) { d.verdict(v, c) },
		"question": func(_, v *yaml.Node) { nodes.question = v; d.question(v, c) },
		"select":   func(_, v *yaml.Node) { nodes.selectKey = v; d.selectKey(v, c) },
		"budget":   func(_, v *yaml.Node) { nodes.budget = v; d.budget(v, c) },
		"deadline": func(_, v *yaml.Node) { nodes.deadline = v; d.deadline(v, c) },
		"launches_per_host": func(_, v *yaml.Node) {
			nodes.launchesPerHost = v
			if n, ok := d.intAtLeast(v, "launches_per_host", 1); ok && n >= 1 {
				if n > MaxLaunchesPerHost {
					d.errorf(v, "launches_per_host: %d is more than %d", n, MaxLaunchesPerHost)
					return
				}
				c.LaunchesPerHost = n
			}
		},
	})
	if nodes.budget != nil && nodes.deadline != nil {
		d.errorf(nodes.deadline, "deadline: give budget (a duration) or deadline (a time of day), not both")
	}
	// A missing key has no line of its own; the start of the file's mapping
	// gives an editor somewhere to jump to.
	top := d.pos(root)
	nodes.root = top
	if c.Name == "" && !hasKey(root, "campaign") {
		l.p.errorf(top, "campaign: missing (the campaign's name)")
	}
	if !hasHost && !fleetGiven {
		l.p.errorf(top, "host: missing (`local`, or a mapping with ssh:)")
	}
	if !hasSweep {
		l.p.errorf(top, "sweep: missing (at least sweep.concurrency or sweep.rates)")
	} else if nodes.sweep.Kind == yaml.MappingNode {
		switch {
		case len(levelKeys) == 0:
			d.errorf(nodes.sweep, "sweep.concurrency: missing (the levels to run, e.g. [1, 2, 5, 10], or sweep.rates in requests per second)")
		case len(levelKeys) == 2 && nodes.speeds == nil:
			d.errorf(nodes.rates, "sweep.rates: give either sweep.concurrency (a closed loop) or sweep.rates (open-loop arrivals), not both")
		case len(levelKeys) >= 2:
			d.errorf(nodes.speeds, "sweep.speeds: replay a trace, or give sweep.concurrency or sweep.rates, not more than one of them")
		case nodes.speeds != nil && nodes.trace == nil:
			d.errorf(nodes.speeds, "sweep.speeds: replay sweep.trace at these speeds, but sweep.trace is missing")
		}
		if nodes.burstiness != nil && len(c.Sweep.Rates) == 0 {
			d.errorf(nodes.burstiness, "sweep.burstiness: shapes the arrivals of sweep.rates; a concurrency sweep has none")
		}
	}
	if c.Host.Workdir == "" {
		if c.Host.Local {
			c.Host.Workdir = defaultLocalWorkdir()
		} else {
			c.Host.Workdir = DefaultSSHWorkdir
		}
	}
	if c.Host.Python == "" {
		c.Host.Python = DefaultPython
	}
	if c.Host.SweepMode == "" {
		c.Host.SweepMode = DefaultSweepMode
	}
	if c.Host.LinkPatience == 0 {
		c.Host.LinkPatience = DefaultLinkPatience
	}
	if fleetGiven {
		d.fleet(c, fleet, nodes.host)
	}
	if c.GPU.None {
		d.noGPUPower(&c.Power, nodes)
		d.noGPUGres(c.Host.Slurm, nodes)
	}
	l.prompts(c, d.pos(nodes.prompts))
	l.trace(c, d, d.pos(nodes.trace), nodes.trace)
	l.scenarios(c, d, nodes)
	checkQuestion(c, d, nodes)
	l.checkDeployments(c, d, nodes)
	l.checkRoleCommands(c)
	l.checkSlots(c, d, nodes)
	l.helpFormat(c, d, nodes.engine)
	return c
}

// helpFormat refuses an engine.help without engine.help_format in a
// campaign with a generic scenario: no profile says what such a server's
// help looks like.
func (l *loader) helpFormat(c *Campaign, d *doc, engineNode *yaml.Node) {
	if len(c.Engine.Help) == 0 || c.Engine.HelpFormat != "" {
		return
	}
	for _, s := range c.Scenarios {
		if s.Engine == engine.Generic {
			d.errorf(keyValue(engineNode, "help"), "engine.help: scenario %s is engine generic, which has no help format of its own; name it with engine.help_format (%s)",
				s.Name, strings.Join(engine.HelpFormats, ", "))
			return
		}
	}
}

// hasKey reports whether a mapping node has key.
func hasKey(n *yaml.Node, key string) bool { return keyValue(n, key) != nil }

func keyValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// host decodes host:. With hosts: beside it (fleet), the mapping needs no
// ssh: since it gives only the settings every host of the fleet shares.
func (d *doc) host(v *yaml.Node, h *Host, fleet bool) {
	if v.Kind == yaml.ScalarNode && !isNull(v) {
		if v.Value == "local" {
			h.Local = true
			if fleet {
				d.errorf(v, "host: local cannot be combined with hosts: (a fleet is of SSH hosts; give its shared settings as host: {workdir: ...})")
			}
			return
		}
		d.errorf(v, "host: want `local` or a mapping (host: {ssh: %s})", v.Value)
		return
	}
	hasSSH := false
	d.mapping(v, "host", map[string]field{
		"slurm": func(_, v *yaml.Node) { h.Slurm = d.slurm(v) },
		"ssh": func(_, v *yaml.Node) {
			s, ok := d.word(v, "host.ssh")
			if !ok {
				return
			}
			hasSSH = true
			if msg := checkSSHTarget(s); msg != "" {
				d.errorf(v, "host.ssh: %s", msg)
			}
			h.SSH = s
		},
		"workdir": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "host.workdir"); ok {
				if !strings.HasPrefix(s, "/") {
					d.errorf(v, "host.workdir: %q must be an absolute path", s)
				}
				h.Workdir = filepath.Clean(s)
			}
		},
		"python": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "host.python"); ok {
				if s == "" {
					d.errorf(v, "host.python: empty")
				}
				h.Python = s
			}
		},
		"accept_new": func(_, v *yaml.Node) { h.AcceptNew, _ = d.boolean(v, "host.accept_new") },
		"sweep_mode": func(_, v *yaml.Node) {
			if m, ok := d.choice(v, "host.sweep_mode", SweepOnHost, SweepOverSSH); ok {
				h.SweepMode = m
			}
		},
		"link_patience": func(_, v *yaml.Node) {
			if p, ok := d.positiveDuration(v, "host.link_patience"); ok {
				h.LinkPatience = p
			}
		},
	})
	switch {
	case v.Kind != yaml.MappingNode:
	case hasKey(v, "slurm") && hasKey(v, "ssh"):
		d.errorf(keyValue(v, "ssh"), "host.ssh: give either host.ssh (one machine) or host.slurm (a cluster's allocation), not both")
	case hasKey(v, "slurm") && fleet:
		d.errorf(keyValue(v, "slurm"), "host.slurm: cannot be combined with hosts: (the allocation's nodes are the campaign's hosts)")
	case !fleet && !hasSSH && !hasKey(v, "ssh") && !hasKey(v, "slurm"):
		d.errorf(v, "host: ssh: missing (an alias from ~/.ssh/config or user@host:port; or write host: local)")
	}
}

// hosts decodes hosts:, a fleet's SSH hosts: each one what host.ssh takes
// (an alias or user@host:port), none repeated, `local` refused.
func (d *doc) hosts(v *yaml.Node) []string {
	return distinctList(d, deref(v), "hosts", "SSH hosts (aliases or user@host:port)", "SSH host",
		func(n *yaml.Node, what string) (string, string, string, bool) {
			s, ok := d.word(n, what)
			if !ok {
				return "", "", "", false
			}
			msg := checkSSHTarget(s)
			if s == "local" {
				msg = "local cannot be part of a fleet (its servers would share this machine with the campaign); use host: local alone"
			}
			if msg != "" {
				d.errorf(n, "%s: %s", what, msg)
				return "", "", "", false
			}
			return s, s, strconv.Quote(s), true
		})
}

// distinctList decodes the list v at field (sweep.rates): not empty, each
// item read by item, no two items alike. item reports an item's own errors
// and returns its value, the key two alike items share, how an error names
// it ("rate 0.5"), and whether to keep it. items and one name what the
// list holds in its errors: "want a list of ITEMS", "at least one ONE".
func distinctList[T any, K comparable](d *doc, v *yaml.Node, field, items, one string,
	item func(n *yaml.Node, what string) (value T, key K, name string, ok bool)) []T {
	if v.Kind != yaml.SequenceNode {
		d.errorf(v, "%s: want a list of %s, got %s", field, items, kindName(v))
		return nil
	}
	if len(v.Content) == 0 {
		d.errorf(v, "%s: empty list (at least one %s)", field, one)
		return nil
	}
	var out []T
	seen := map[K]*yaml.Node{}
	for i, n := range v.Content {
		n = deref(n)
		what := fmt.Sprintf("%s[%d]", field, i)
		x, key, name, ok := item(n, what)
		if !ok {
			continue
		}
		if first, dup := seen[key]; dup {
			d.errorf(n, "%s: %s repeated (first at line %d)", what, name, first.Line)
			continue
		}
		seen[key] = n
		out = append(out, x)
	}
	return out
}

// fleet fills c.Hosts from hosts:, each entry with the shared settings of
// host: (already defaulted), and makes c.Host the first entry, so what reads
// c.Host (the python launcher, the workdir) sees a host of the fleet. A
// host.ssh beside hosts: must name one of them.
func (d *doc) fleet(c *Campaign, names []string, hostNode *yaml.Node) {
	if c.Host.Local {
		return // already refused
	}
	if c.Host.SSH != "" && !slices.Contains(names, c.Host.SSH) {
		at := keyValue(deref(hostNode), "ssh")
		if at == nil {
			at = hostNode
		}
		d.errorf(at, "host.ssh: %q is not among hosts: (%s); with hosts:, host: gives only the settings the fleet shares",
			c.Host.SSH, strings.Join(names, ", "))
	}
	if len(names) == 0 {
		return
	}
	c.Hosts = make([]Host, len(names))
	for i, n := range names {
		h := c.Host
		h.SSH = n
		c.Hosts[i] = h
	}
	c.Host.SSH = names[0]
}

// checkSSHTarget returns what is wrong with an ssh destination, or "".
func checkSSHTarget(s string) string {
	switch {
	case s == "":
		return "empty"
	case strings.HasPrefix(s, "-"):
		return fmt.Sprintf("%q starts with '-'", s)
	case strings.ContainsAny(s, " \t"):
		return fmt.Sprintf("%q contains a space", s)
	}
	hostPort := s[strings.LastIndexByte(s, '@')+1:]
	if strings.HasPrefix(hostPort, "[") { // [v6addr]:port
		end := strings.IndexByte(hostPort, ']')
		if end < 0 {
			return fmt.Sprintf("%q: unclosed '['", s)
		}
		hostPort = hostPort[end+1:]
		if hostPort == "" {
			return ""
		}
		if !strings.HasPrefix(hostPort, ":") {
			return fmt.Sprintf("%q: want [address]:port", s)
		}
	} else if strings.Count(hostPort, ":") != 1 {
		return ""
	}
	port := hostPort[strings.LastIndexByte(hostPort, ':')+1:]
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > maxPort {
		return fmt.Sprintf("%q: port %q is not 1-%d", s, port, maxPort)
	}
	return ""
}

func (d *doc) engine(v *yaml.Node, e *EngineOpts, envAt map[string]position) {
	d.mapping(v, "engine", map[string]field{
		"port": func(_, v *yaml.Node) {
			if n, ok := d.integer(v, "engine.port"); ok {
				if n < 1 || n > maxPort {
					d.errorf(v, "engine.port: %d is out of range (1-%d)", n, maxPort)
				}
				e.Port = n
			}
		},
		"health_path": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "engine.health_path"); ok {
				if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, " \t") {
					d.errorf(v, "engine.health_path: %q must be a URL path starting with '/'", s)
				}
				e.HealthPath = s
			}
		},
		"health_timeout": func(_, v *yaml.Node) {
			e.HealthTimeout, _ = d.positiveDuration(v, "engine.health_timeout")
		},
		"poll_interval": func(_, v *yaml.Node) {
			e.PollInterval, _ = d.positiveDuration(v, "engine.poll_interval")
		},
		"ready_line": func(_, v *yaml.Node) { e.ReadyLine, _ = d.word(v, "engine.ready_line") },
		"stop_grace": func(_, v *yaml.Node) {
			if t, ok := d.duration(v, "engine.stop_grace"); ok {
				if t < 0 {
					d.errorf(v, "engine.stop_grace: must not be negative")
				}
				e.StopGrace = t
			}
		},
		"command":       func(_, v *yaml.Node) { e.Command = d.command(v, "engine.command") },
		"role_commands": func(_, v *yaml.Node) { e.RoleCommands, e.roleCommandsAt = d.roleCommands(v) },
		"help": func(_, v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && v.Value == "off" {
				e.HelpOff = true
				return
			}
			e.Help = d.command(v, "engine.help")
		},
		"help_format": func(_, v *yaml.Node) {
			if f, ok := d.word(v, "engine.help_format"); ok {
				if !slices.Contains(engine.HelpFormats, f) {
					d.errorf(v, "engine.help_format: %q is not a help format (%s)", f, strings.Join(engine.HelpFormats, ", "))
					return
				}
				e.HelpFormat = f
			}
		},
		"prefix_cache": func(_, v *yaml.Node) { e.PrefixCache = d.prefixCache(v, "engine.prefix_cache") },
		"acknowledge": func(_, v *yaml.Node) {
			ws, ok := d.words(v, "engine.acknowledge")
			if !ok {
				return
			}
			for i, w := range ws {
				if !slices.Contains(Acknowledgeable, w) {
					d.errorf(v.Content[i], "engine.acknowledge: %q is nothing to acknowledge (%s)", w, strings.Join(Acknowledgeable, ", "))
					return
				}
			}
			e.Acknowledge = ws
		},
		"env": func(_, v *yaml.Node) {
			d.env(v, "engine.env", func(name, value string, remove bool, at position) {
				if remove {
					d.p.errorf(at, "engine.env.%s: want a value", name)
					return
				}
				e.Env[name] = value
				envAt[name] = at
			})
		},
	})
}

// command decodes engine.command (or engine.help, named by field): a list
// of words, or one string split on white space. Quotes in the one-string
// form would not be interpreted, so they are refused rather than silently
// passed on.
func (d *doc) command(v *yaml.Node, field string) []string {
	if v.Kind == yaml.ScalarNode && !isNull(v) {
		s, ok := d.word(v, field)
		if !ok {
			return nil
		}
		if strings.ContainsAny(s, `'"\`) {
			d.errorf(v, "%s: quotes and backslashes are not interpreted in the one-line form; write a list of words", field)
			return nil
		}
		w := strings.Fields(s)
		if len(w) == 0 {
			d.errorf(v, "%s: empty", field)
			return nil
		}
		if !d.checkProgram(v, field, w[0]) {
			return nil
		}
		return w
	}
	w, _ := d.words(v, field)
	return w
}

// gpu decodes gpu: the scalar `none` (a host without a GPU), or the
// mapping of the wait for free GPU memory. `none` takes the mapping's
// place, so none of the wait's keys can be written beside it; with none
// they would mean nothing, and their defaults are cleared too.
func (d *doc) gpu(v *yaml.Node, g *GPUOpts) {
	if v.Kind == yaml.ScalarNode && !isNull(v) {
		if v.Value != GPUNone {
			d.errorf(v, "gpu: want %s (the host has no GPU) or a mapping (gpu: {max_used_mib: 1024}), got %s", GPUNone, kindName(v))
			return
		}
		*g = GPUOpts{None: true}
		return
	}
	d.mapping(v, "gpu", map[string]field{
		"max_used_mib": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "gpu.max_used_mib", 0); ok {
				g.MaxUsedMiB = n
			}
		},
		"wait_timeout": func(_, v *yaml.Node) { g.WaitTimeout, _ = d.positiveDuration(v, "gpu.wait_timeout") },
		"kill_strays":  func(_, v *yaml.Node) { g.KillStrays, _ = d.boolean(v, "gpu.kill_strays") },
		"nvidia_smi": func(_, v *yaml.Node) {
			if s, ok := d.word(v, "gpu.nvidia_smi"); ok {
				if strings.TrimSpace(s) == "" {
					d.errorf(v, "gpu.nvidia_smi: empty")
				}
				g.NvidiaSMI = s
			}
		},
	})
}

func (d *doc) power(v *yaml.Node, p *PowerOpts) {
	d.mapping(v, "power", map[string]field{
		"source": func(_, v *yaml.Node) {
			if s, ok := d.choice(v, "power.source", PowerNvidiaSMI, PowerDCGM, PowerOff); ok {
				p.Source = s
			}
		},
		"interval": func(_, v *yaml.Node) {
			if t, ok := d.positiveDuration(v, "power.interval"); ok {
				if t > MaxPowerInterval {
					d.errorf(v, "power.interval: %s is longer than %s: too few readings per level", t, MaxPowerInterval)
				}
				p.Interval = t
			}
		},
	})
}

// noGPUPower switches the power sampler off on a host without a GPU: it
// reads GPU power, so its keys there are errors rather than left to fail
// on the host (or, worse, to sample some other machine's nvidia-smi).
func (d *doc) noGPUPower(p *PowerOpts, nodes campaignNodes) {
	p.Source = PowerOff
	pv := deref(nodes.power)
	if pv == nil || pv.Kind != yaml.MappingNode {
		return
	}
	if s := deref(keyValue(pv, "source")); s != nil && s.Kind == yaml.ScalarNode && (s.Value == PowerNvidiaSMI || s.Value == PowerDCGM) {
		d.errorf(s, "power.source: %s reads GPU power, and gpu: %s (line %d) says the host has no GPU; leave power out or write source: %s",
			s.Value, GPUNone, nodes.gpu.Line, PowerOff)
	}
	if iv := deref(keyValue(pv, "interval")); iv != nil {
		d.errorf(iv, "power.interval: no power sampler runs on a host without a GPU (gpu: %s, line %d)", GPUNone, nodes.gpu.Line)
	}
}

// noGPUGres warns when a campaign that uses no GPU still asks Slurm for
// GPUs on every node: they would sit idle, held from others, for the whole
// allocation. A warning, not an error: a site may only schedule its CPU
// jobs through a GPU partition's gres.
func (d *doc) noGPUGres(s *SlurmSpec, nodes campaignNodes) {
	if s == nil {
		return
	}
	for _, r := range strings.Split(s.Gres, ",") {
		if name, _, _ := strings.Cut(strings.TrimSpace(r), ":"); name == "gpu" {
			at := deref(keyValue(deref(keyValue(deref(nodes.host), "slurm")), "gres"))
			d.p.warnf(d.pos(at), "host.slurm.gres: %q asks every node for GPUs, and gpu: %s (line %d) says the campaign uses none: they would sit idle for the whole allocation",
				s.Gres, GPUNone, nodes.gpu.Line)
			return
		}
	}
}

// sweep decodes the sweep; it returns which of concurrency and rates were
// given.
func (d *doc) sweep(v *yaml.Node, s *Sweep, nodes *campaignNodes) []string {
	var given []string
	d.mapping(v, "sweep", map[string]field{
		"concurrency": func(_, v *yaml.Node) {
			given = append(given, "concurrency")
			s.Concurrency = d.levels(v)
		},
		"rates": func(_, v *yaml.Node) {
			given = append(given, "rates")
			nodes.rates = v
			s.Rates = d.rates(v)
		},
		"speeds": func(_, v *yaml.Node) {
			given = append(given, "speeds")
			nodes.speeds = v
			s.Speeds = d.speeds(v)
		},
		"trace": func(_, v *yaml.Node) {
			nodes.trace = v
			d.traceKey(v, s)
		},
		"burstiness": func(_, v *yaml.Node) {
			nodes.burstiness = v
			if f, ok := d.number(v, "sweep.burstiness"); ok {
				if !(f > 0) || f > MaxBurstiness {
					d.errorf(v, "sweep.burstiness: %g: want more than 0 and at most %g (1 is Poisson; below 1 bursts, above 1 more even)", f, float64(MaxBurstiness))
					return
				}
				s.Burstiness = f
			}
		},
		"requests": func(_, v *yaml.Node) {
			nodes.requests = v
			if v.Kind == yaml.ScalarNode && v.Value == "auto" && v.ShortTag() == "!!str" {
				s.Requests = 0
				return
			}
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
				d.errorf(v, "sweep.requests: want a number or auto, got %s", kindName(v))
				return
			}
			if n, ok := d.integer(v, "sweep.requests"); ok {
				if n <= 0 {
					d.errorf(v, "sweep.requests: must be at least 1 (or auto), got %d", n)
					return
				}
				s.Requests = n
			}
		},
		"max_tokens": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "sweep.max_tokens", 1); ok {
				s.MaxTokens = n
			}
		},
		"warmup": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "sweep.warmup", 0); ok {
				s.Warmup = n
			}
		},
		"prompts": func(_, v *yaml.Node) {
			nodes.prompts = v
			d.promptsKey(v, s)
		},
		"temperature": func(_, v *yaml.Node) {
			if f, ok := d.number(v, "sweep.temperature"); ok {
				if f < 0 {
					d.errorf(v, "sweep.temperature: must not be negative")
				}
				s.Temperature = f
			}
		},
		"ignore_eos": func(_, v *yaml.Node) { s.IgnoreEOS, _ = d.boolean(v, "sweep.ignore_eos") },
		"endpoint": func(_, v *yaml.Node) {
			if e, ok := d.choice(v, "sweep.endpoint", EndpointChat, EndpointCompletions); ok {
				s.Endpoint = e
			}
		},
		"repeats": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "sweep.repeats", 1); ok {
				s.Repeats = n
			}
		},
		"seed": func(_, v *yaml.Node) {
			if n, ok := d.integer(v, "sweep.seed"); ok {
				s.Seed = int64(n)
			}
		},
		"request_timeout": func(_, v *yaml.Node) {
			s.RequestTimeout, _ = d.positiveDuration(v, "sweep.request_timeout")
		},
		"unique_prompts": func(_, v *yaml.Node) { s.UniquePrompts, _ = d.boolean(v, "sweep.unique_prompts") },
		"scrape_interval": func(_, v *yaml.Node) {
			s.ScrapeInterval, _ = d.positiveDuration(v, "sweep.scrape_interval")
		},
		"workload":    func(_, v *yaml.Node) { d.workload(v, s) },
		"percentiles": func(_, v *yaml.Node) { s.Percentiles = d.percentiles(v) },
	})
	return given
}

// rates decodes sweep.rates: distinct arrival rates in requests per second,
// positive, in thousandths at most.
func (d *doc) rates(v *yaml.Node) []float64 {
	return distinctList(d, v, "sweep.rates", "rates in requests per second", "rate",
		func(r *yaml.Node, what string) (float64, measure.Level, string, bool) {
			f, ok := d.number(r, what)
			if !ok {
				return 0, measure.Level{}, "", false
			}
			key := measure.RateLevel(f)
			switch {
			case !(f > 0):
				d.errorf(r, "%s: rate %g: must be more than 0 requests per second", what, f)
			case f > MaxRate:
				d.errorf(r, "%s: rate %g: more than %d requests per second", what, f, MaxRate)
			case math.Abs(key.Rate-f) > 1e-9*f:
				d.errorf(r, "%s: rate %g: at most three decimals (steps of %g requests per second)", what, f, measure.RateResolution)
			default:
				return f, key, fmt.Sprintf("rate %g", f), true
			}
			return 0, measure.Level{}, "", false
		})
}

// levels decodes sweep.concurrency: positive, distinct integers.
func (d *doc) levels(v *yaml.Node) []int {
	return distinctList(d, v, "sweep.concurrency", "levels", "level",
		func(c *yaml.Node, what string) (int, int, string, bool) {
			n, ok := d.integer(c, what)
			switch {
			case !ok:
			case n <= 0:
				d.errorf(c, "%s: level %d: must be at least 1", what, n)
			case n > MaxConcurrency:
				d.errorf(c, "%s: level %d: more than %d", what, n, MaxConcurrency)
			default:
				return n, n, fmt.Sprintf("level %d", n), true
			}
			return 0, 0, "", false
		})
}

// scenarios loads the listed scenarios and runs the checks across them.
func (l *loader) scenarios(c *Campaign, d *doc, nodes campaignNodes) {
	v := deref(nodes.scenarios)
	if v == nil {
		l.p.errorf(nodes.root, "scenarios: missing (the list of scenarios to compare)")
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.errorf(v, "scenarios: want a list of names or paths, got %s", kindName(v))
		return
	}
	if len(v.Content) == 0 {
		d.errorf(v, "scenarios: empty list")
		return
	}
	configDir := filepath.Dir(c.File)
	nameDir := filepath.Join(configDir, "..", "scenarios")
	// names holds every listed scenario's name, broken ones included (by
	// their file name), so one broken file does not also fail the baseline.
	names := map[string]*yaml.Node{}
	var order []string
	spaces := map[string][]*Scenario{} // the scenarios written as a space, by name: their points
	spaceRefused := false
	firstSpace := "" // the first scenario listed, when it is a space
	for i, e := range v.Content {
		e = deref(e)
		ref, ok := d.word(e, fmt.Sprintf("scenarios[%d]", i))
		if !ok {
			continue
		}
		if ref == "" {
			d.errorf(e, "scenarios[%d]: empty", i)
			continue
		}
		if !isPathRef(ref) && !validName(ref) {
			d.errorf(e, "scenarios[%d]: %q is neither a scenario name nor a path to a .yaml file", i, ref)
			continue
		}
		path := refPath(ref, nameDir, configDir)
		point := ""
		if p := l.pointRef(ref, nameDir); p != "" {
			point, path = ref, p
		}
		s := l.scenario(path, d.pos(e), "scenario")
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if s != nil {
			name = s.Name
			if !isPathRef(ref) && s.Name != ref && point == "" {
				l.p.warnf(d.pos(e), "scenarios[%d]: %s names itself %q, not %q; results and baseline use %q", i, path, s.Name, ref, s.Name)
			}
		}
		// A scenario with a space: is its points, each a scenario of its own.
		members := []*Scenario{s}
		switch {
		case s != nil && point != "":
			// One point of a space: the others are not the campaign's.
			members = l.pickPoint(c, d, e, i, s, point)
		case s != nil && s.space != nil:
			members = l.expandSpace(c, s)
			spaces[name] = members
			if members == nil {
				spaceRefused = true
			}
			if i == 0 {
				firstSpace = name
			}
		}
		for _, m := range members {
			mname := name
			if point != "" {
				mname = point
			}
			if m != nil {
				l.finish(m)
				mname = m.Name
			}
			if first, dup := names[mname]; dup {
				d.errorf(e, "scenarios[%d]: duplicate scenario name %q (first at line %d)", i, mname, first.Line)
				continue
			}
			names[mname] = e
			order = append(order, mname)
			if m != nil {
				c.Scenarios = append(c.Scenarios, m)
			}
		}
	}
	switch {
	case spaceRefused:
		// The baseline may be one of the points not made.
	case c.Baseline == "" && nodes.baseline == nil && firstSpace != "":
		l.p.errorf(nodes.root, "baseline: missing, and the first scenario, %s, is a space of %d points; name the baseline: a scenario, or one of the points (%s)",
			firstSpace, len(spaces[firstSpace]), pointNames(spaces[firstSpace]))
	case c.Baseline == "" && nodes.baseline == nil && len(order) > 0:
		c.Baseline = order[0]
	case nodes.baseline != nil && len(order) > 0 && names[c.Baseline] == nil && spaces[c.Baseline] != nil:
		d.errorf(nodes.baseline, "baseline: %q is a space of %d points, not one scenario; name one of the points (%s) or another scenario",
			c.Baseline, len(spaces[c.Baseline]), pointNames(spaces[c.Baseline]))
	case nodes.baseline != nil && len(order) > 0 && names[c.Baseline] == nil:
		d.errorf(nodes.baseline, "baseline: %q is not among the scenarios (%s)", c.Baseline, strings.Join(order, ", "))
	}
	l.warnings(c, d, nodes)
}

// warnings flags settings that make an A/B unfair or that the engine will
// silently override.
func (l *loader) warnings(c *Campaign, d *doc, nodes campaignNodes) {
	maxLevel := 0
	if len(c.Sweep.Concurrency) > 0 {
		maxLevel = slices.Max(c.Sweep.Concurrency)
	}
	if c.Sweep.Requests > 0 && c.Sweep.Requests < maxLevel {
		d.p.warnf(d.pos(nodes.requests), "sweep.requests: %d requests never reach concurrency %d; use auto or at least %d",
			c.Sweep.Requests, maxLevel, maxLevel)
	}
	var baseline *Scenario
	for _, s := range c.Scenarios {
		if s.Name == c.Baseline {
			baseline = s
		}
	}
	for _, s := range c.Scenarios {
		p := s.Profile()
		if p == nil {
			continue
		}
		env := func(name string) (string, bool) {
			if v, ok := s.Env[name]; ok {
				return v, true
			}
			v, ok := c.Engine.Env[name]
			return v, ok
		}
		setup := engine.Setup{Scenario: s.Name, Args: s, Env: env, MaxLevel: maxLevel,
			MaxTokens: c.Sweep.MaxTokens, UniquePrompts: c.Sweep.UniquePrompts,
			Baseline: s == baseline}
		if c.Host.Local {
			// The engine runs here: the file its flag names is this
			// machine's. On another host bakeoff cannot see it.
			setup.ReadFile = readEngineFile
		}
		if baseline != nil && s != baseline {
			setup.BaselineArgs = baseline
		}
		for _, w := range p.Warnings(setup) {
			// A setting the engine refuses at start would fail the
			// launch hours into the night: refuse the campaign now.
			if w.Refuse {
				l.p.errorf(s.warnAt(w, nodes.envAt), "%s", w.Text)
				continue
			}
			l.p.warnf(s.warnAt(w, nodes.envAt), "%s", w.Text)
		}
	}
}

// readEngineFile reads a file a scenario's flag names for the engine's
// checks. Only an absolute path is read: a relative one is resolved by the
// engine on its host, against a directory bakeoff does not know here.
func readEngineFile(path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("reading %s: not an absolute path", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// warnAt is where an engine warning points: the arg or variable that causes
// it, else the scenario's file.
func (s *Scenario) warnAt(w engine.Warning, campaignEnvAt map[string]position) position {
	if at, ok := s.src.argPos[w.Arg]; ok && w.Arg != "" {
		return at
	}
	if w.Env != "" {
		if at, ok := s.src.envPos[w.Env]; ok {
			return at
		}
		if at, ok := campaignEnvAt[w.Env]; ok {
			return at
		}
	}
	return s.src.file
}

// rounds reads `rounds: N` (a fixed design: every scenario launched N
// times) or `rounds: {min: A, max: B}` (sequential: rounds go on from A
// until every comparison is decided, B at the most).
func (d *doc) rounds(v *yaml.Node, c *Campaign) {
	atMost := func(n *yaml.Node, what string, x int) {
		if x > MaxRounds {
			d.errorf(n, "%s: %d is more than %d", what, x, MaxRounds)
		}
	}
	if v.Kind != yaml.MappingNode {
		if n, ok := d.intAtLeast(v, "rounds", 1); ok {
			atMost(v, "rounds", n)
			c.Rounds, c.MinRounds = n, 0
		}
		return
	}
	var minN, maxN *yaml.Node
	d.mapping(v, "rounds", map[string]field{
		"min": func(_, n *yaml.Node) { minN = n },
		"max": func(_, n *yaml.Node) { maxN = n },
	})
	if minN == nil || maxN == nil {
		d.errorf(v, "rounds: give both min and max (or one number for a fixed design)")
		return
	}
	lo, okLo := d.intAtLeast(minN, "rounds.min", MinSequentialRounds)
	hi, okHi := d.intAtLeast(maxN, "rounds.max", 1)
	if !okLo || !okHi {
		return
	}
	atMost(maxN, "rounds.max", hi)
	if hi < lo {
		d.errorf(maxN, "rounds.max: %d is less than rounds.min %d", hi, lo)
		return
	}
	c.Rounds, c.MinRounds = hi, lo
	if lo == hi {
		c.MinRounds = 0 // min = max is the fixed design
	}
}
