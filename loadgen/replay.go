package loadgen

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// A replay sends a trace's rows at their recorded times divided by the
// level's speed: an open loop whose schedule is the trace's instead of a
// drawn one, judged like a rate (lateness, saturation, the open-loop
// window). Row i is request i of every level, so every scenario, round and
// speed sends the same prompts in the same order.

// replaySet is the prompt set a replay sends: one prompt per row, in the
// trace's order. A Mooncake row is its blocks as token ids when the
// endpoint takes them (ids), else as words of the built-in text, cut to its
// input_length later by the engine's tokenizer where it has one; a plain
// row is its prompt. Output lengths are each row's own.
func replaySet(t *prompts.Trace, ids bool) (*prompts.Set, error) {
	words, err := prompts.Words()
	if err != nil {
		return nil, err
	}
	set := &prompts.Set{Name: t.Name, Prompts: make([]prompts.Prompt, len(t.Rows)), Hash: t.Hash}
	for i, r := range t.Rows {
		p := prompts.Prompt{MaxTokens: r.Output, OutputTokens: r.Output}
		if t.Hashed() {
			// A row that asks for no output still has one token generated.
			p.MaxTokens, p.Target = max(1, r.Output), r.Input
		}
		if ids && t.Hashed() {
			p.IDs = t.RowTokens(i)
		} else {
			p.Text = t.RowText(i, words)
			p.Messages = []prompts.Message{{Role: "user", Content: p.Text}}
		}
		set.Prompts[i] = p
	}
	return set, nil
}

// checkReplay reports what is wrong with a replay's options.
func (o *Options) checkReplay() error {
	if len(o.Speeds) == 0 {
		if o.Trace != nil {
			return fmt.Errorf("loadgen: a trace without speeds")
		}
		return nil
	}
	switch {
	case o.Trace == nil:
		return fmt.Errorf("loadgen: speeds without a trace")
	case len(o.Concurrency) > 0 || len(o.Rates) > 0:
		return fmt.Errorf("loadgen: speeds with concurrency levels or rates: want one of the three")
	case o.UniquePrompts:
		return fmt.Errorf("loadgen: unique prompts with a trace: a trace's prefixes are what it replays")
	}
	for _, v := range o.Speeds {
		if !(v >= measure.RateResolution && v <= measure.MaxSpeed) {
			return fmt.Errorf("loadgen: speed %g: want %g to %d", v, measure.RateResolution, measure.MaxSpeed)
		}
	}
	return nil
}
