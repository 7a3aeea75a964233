package campaign

import (
	"gopkg.in/yaml.v3"
)

// What a campaign asks of its scenarios (key question).
const (
	// QuestionCompare asks, of every variant, whether it is faster or
	// slower than the baseline at each level, or tied with it.
	QuestionCompare = "compare"
	// QuestionSelect asks which configuration is the fastest at each
	// level: a race (package verdict/selection) that launches a
	// configuration only while it can still win somewhere.
	QuestionSelect = "select"
)

// Select tunes a selection campaign's race (key select).
type Select struct {
	// DeltaPct is the indifference zone, percent: a configuration within
	// it of the best is as good as the best. 0: the campaign's
	// equivalence_margin.
	DeltaPct float64
	// PCS is the probability of correct selection asked of each level,
	// as a fraction; 0: selection.DefaultPCS.
	PCS float64
	// FirstStage is the rounds every configuration runs before any is
	// ruled out; 0: selection.DefaultFirstStage.
	FirstStage int
}

// question reads the campaign's question key: compare (the default) or
// select.
func (d *doc) question(v *yaml.Node, c *Campaign) {
	s, ok := d.word(v, "question")
	if !ok {
		return
	}
	switch s {
	case QuestionCompare, QuestionSelect:
		c.Question = s
	default:
		d.errorf(v, "question: %q is not a question bakeoff asks (compare: each variant against the baseline; select: the best configuration at each level)", s)
	}
}

// selectKey reads the campaign's select key:
//
//	select:
//	  delta: 2%   # the indifference zone (default: equivalence_margin)
//	  pcs: 95%    # the probability of correct selection per level
//	  first_stage: 2  # rounds before any configuration is ruled out
func (d *doc) selectKey(v *yaml.Node, c *Campaign) {
	d.mapping(v, "select", map[string]field{
		"delta": func(_, n *yaml.Node) {
			x, ok := d.percent(n, "select.delta")
			switch {
			case !ok:
			case x <= 0 || x >= 100:
				d.errorf(n, "select.delta: want a difference between 0%% and 100%%, e.g. 2%%")
			default:
				c.Select.DeltaPct = x
			}
		},
		"first_stage": func(_, n *yaml.Node) {
			if k, ok := d.intAtLeast(n, "select.first_stage", 2); ok {
				c.Select.FirstStage = k
			}
		},
		"pcs": func(_, n *yaml.Node) {
			x, ok := d.percent(n, "select.pcs")
			switch {
			case !ok:
			case x < 50 || x >= 100:
				d.errorf(n, "select.pcs: want a probability of correct selection from 50%% to under 100%%, e.g. 95%%")
			default:
				c.Select.PCS = x / 100
			}
		},
	})
}

// checkQuestion refuses a select key without question: select, and a
// selection campaign the race cannot run: fewer than two configurations,
// fewer than two rounds (the first stage estimates the launch-to-launch
// variance), or levels that are not concurrencies (an open-loop level can
// saturate, and a saturated launch has no figure the race can rank).
func checkQuestion(c *Campaign, d *doc, nodes campaignNodes) {
	if nodes.selectKey != nil && c.Question != QuestionSelect {
		d.errorf(nodes.selectKey, "select: tunes the race of question: select, and this campaign asks %s", c.QuestionOrDefault())
	}
	if c.Question != QuestionSelect {
		return
	}
	switch {
	case len(c.Scenarios) < 2:
		d.errorf(nodes.question, "question: select races configurations, and the campaign has %d; list at least two, or a scenario with a space: (docs/CONFIG.md, \"Spaces\")", len(c.Scenarios))
	case c.Select.FirstStage > max(c.Rounds, 1):
		d.errorf(nodes.selectKey, "select.first_stage: %d rounds, more than the campaign's %d", c.Select.FirstStage, max(c.Rounds, 1))
	case max(c.Rounds, 1) < 2:
		d.errorf(nodes.question, "question: select races configurations over rounds of launches, and rounds is %d; give at least 2, e.g. rounds: {min: 2, max: 12}", max(c.Rounds, 1))
	case len(c.Sweep.Concurrency) == 0:
		d.errorf(nodes.question, "question: select ranks configurations at concurrency levels (sweep.concurrency); an open-loop rate can saturate a launch, which then has no figure to rank")
	}
}

// QuestionOrDefault is the campaign's question, QuestionCompare when it
// names none.
func (c *Campaign) QuestionOrDefault() string {
	if c.Question == "" {
		return QuestionCompare
	}
	return c.Question
}
