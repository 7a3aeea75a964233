package campaign

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/slurm"
)

// DefaultSlurmMargin is host.slurm.margin's default: the end of an
// allocation kept free of rounds, for the last server's teardown and the
// release.
const DefaultSlurmMargin = 5 * time.Minute

// SlurmSpec is host.slurm: the campaign runs on the nodes of an allocation
// asked for on a Slurm cluster through its login node (docs/SLURM.md). The
// host's other settings (workdir, python, accept_new, sweep_mode) apply on
// every node.
type SlurmSpec struct {
	// Login is the login node: an alias from ~/.ssh/config or
	// user@host:port, as host.ssh takes.
	Login     string
	Partition string // --partition; the cluster's default when empty
	Account   string // --account; the user's default when empty
	// Gres is the generic resources per node (--gres), e.g. "gpu:8".
	Gres string
	// Nodes is how many nodes to allocate (--nodes, at least 1).
	Nodes int
	// Time is the allocation's time limit (--time), as Slurm writes it
	// (TimeText) and as a duration.
	Time     time.Duration
	TimeText string
	// Margin is the end of the allocation no round may run into: a round is
	// started only if its estimated end is before the allocation's end
	// minus Margin.
	Margin time.Duration
}

// slurm decodes host.slurm.
func (d *doc) slurm(v *yaml.Node) *SlurmSpec {
	s := &SlurmSpec{Nodes: 1, Margin: DefaultSlurmMargin}
	var timeNode, marginNode *yaml.Node
	simple := func(dst *string, what string) field {
		return func(_, v *yaml.Node) {
			w, ok := d.word(v, what)
			if !ok {
				return
			}
			if w == "" || strings.ContainsAny(w, " \t'\"\\") || strings.HasPrefix(w, "-") {
				d.errorf(v, "%s: %q: want one word (no spaces, quotes or leading '-')", what, w)
				return
			}
			*dst = w
		}
	}
	d.mapping(v, "host.slurm", map[string]field{
		"login": func(_, v *yaml.Node) {
			w, ok := d.word(v, "host.slurm.login")
			if !ok {
				return
			}
			if msg := checkSSHTarget(w); msg != "" {
				d.errorf(v, "host.slurm.login: %s", msg)
				return
			}
			s.Login = w
		},
		"partition": simple(&s.Partition, "host.slurm.partition"),
		"account":   simple(&s.Account, "host.slurm.account"),
		"gres":      simple(&s.Gres, "host.slurm.gres"),
		"nodes": func(_, v *yaml.Node) {
			if n, ok := d.intAtLeast(v, "host.slurm.nodes", 1); ok && n >= 1 {
				s.Nodes = n
			}
		},
		"time": func(_, v *yaml.Node) {
			timeNode = v
			w, ok := d.str(v, "host.slurm.time")
			if !ok {
				return
			}
			t, err := slurm.ParseTime(w)
			if err != nil {
				d.errorf(v, "host.slurm.time: %v", err)
				return
			}
			if t < time.Minute {
				d.errorf(v, "host.slurm.time: %q: Slurm's limits are whole minutes; want at least 1", w)
				return
			}
			s.Time, s.TimeText = t, w
		},
		"margin": func(_, v *yaml.Node) {
			marginNode = v
			if t, ok := d.duration(v, "host.slurm.margin"); ok {
				if t < 0 {
					d.errorf(v, "host.slurm.margin: must not be negative")
					return
				}
				s.Margin = t
			}
		},
	})
	if v.Kind != yaml.MappingNode {
		return s
	}
	if !hasKey(v, "login") {
		d.errorf(v, "host.slurm.login: missing (the cluster's login node: an alias from ~/.ssh/config or user@host:port)")
	}
	if timeNode == nil {
		d.errorf(v, "host.slurm.time: missing (the allocation's time limit, e.g. \"12:00:00\"; bakeoff starts no round that would outlast it)")
	}
	if s.Time > 0 && marginNode != nil && s.Margin >= s.Time {
		d.errorf(marginNode, "host.slurm.margin: %s leaves nothing of host.slurm.time %s", s.Margin, s.TimeText)
	}
	return s
}
