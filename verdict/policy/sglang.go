package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

const sglang = engine.SGLang

// SGLang switches its speculative steps by the running batch with adaptive
// speculative decoding: --speculative-adaptive and
// --speculative-adaptive-config FILE, a JSON object whose integer keys are
// batch-size lower bounds, each with its candidate_steps, 0 meaning no
// drafting (sgl-project/sglang python/sglang/srt/speculative/
// adaptive_spec_params.py at 015c8726). Each decode round takes the band of
// its batch, padded first to the next captured CUDA-graph size
// (adaptive_step_router.py at a12239f6). It runs EAGLE and EAGLE3 (NEXTN
// being EAGLE's alias) with topk 1 only, and is dropped with a warning under
// DP attention, multi-layer EAGLE, two-batch overlap and PD multiplexing
// (python/sglang/srt/arg_groups/speculative_hook.py at 004c82e0,
// adaptive_unsupported_reason). Each round verifies steps + 1 tokens, so
// the draft token count follows the steps. A band at 0 steps still runs
// the draft extend (eagle_worker_v2.py: "Drafting disabled (high batch
// size). _draft_extend below still runs"), so it is speculation off at a
// price: slower than a server started without speculation.
const sglangSource = "SGLang's adaptive speculative decoding (python/sglang/srt/speculative/adaptive_spec_params.py; topk 1 only)"

// The flags a band's configuration may differ in: the adaptive config
// sets them per band.
var sglangStepFlags = []string{"speculative-num-steps", "speculative-num-draft-tokens", "speculative-eagle-topk"}

// sglangUnsupported are the flags under which SGLang drops adaptive
// decoding, with its reason.
var sglangUnsupported = map[string]string{
	"enable-dp-attention":      "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)",
	"enable-multi-layer-eagle": "enable_multi_layer_eagle=True is not supported",
	"enable-two-batch-overlap": "enable_two_batch_overlap=True is not supported",
	"enable-pdmux":             "enable_pdmux=True is not supported",
}

// sglangAdaptive writes the bands as one adaptive server, or says why it
// cannot.
func sglangAdaptive(bands []Band, configs map[string]Config) (*Setting, string) {
	s := &Setting{Engine: sglang, ConfigFile: "sglang-adaptive.json", Source: sglangSource}
	cs, why := fillBands(s, bands, configs, "SGLang", sglangServable, sglangSteps)
	if why != "" {
		return nil, why
	}
	var spec *Config // the first band that speculates
	for i, b := range s.Bands {
		if b.Steps > 0 && spec == nil {
			spec = &cs[i]
		}
	}
	if spec == nil {
		return nil, "no band speculates, so there is nothing for SGLang's adaptive decoding to switch"
	}
	// The bands may differ in their steps alone: a band that speculates
	// runs the first one's flags with its own steps, a band that does not
	// runs them without the speculative flags.
	specArgs := spec.without(func(k string) bool { return slices.Contains(sglangStepFlags, k) })
	for _, b := range s.Bands {
		c := configs[b.Config]
		own, want := c.without(func(k string) bool { return slices.Contains(sglangStepFlags, k) }), specArgs
		if b.Steps == 0 {
			own, want = nonSpec(c.Args), nonSpec(specArgs)
		}
		if !sameArgs(own, want) {
			return nil, fmt.Sprintf("%s and %s differ in %s, and SGLang's adaptive decoding switches the speculative steps alone", spec.Name, b.Config, argDiff(own, want))
		}
	}
	s.Args = append(slices.Clone(specArgs),
		Arg{Key: "speculative-adaptive", Bare: true},
		Arg{Key: "speculative-adaptive-config", Values: []string{ConfigToken}},
		Arg{Key: "speculative-eagle-topk", Values: []string{"1"}},
		Arg{Key: "speculative-num-steps", Values: []string{strconv.Itoa(firstSteps(s.Bands))}})
	slices.SortFunc(s.Args, func(a, b Arg) int { return strings.Compare(a.Key, b.Key) })
	var entries []string
	for _, b := range s.Bands {
		entries = append(entries, fmt.Sprintf("  %q: {\"candidate_steps\": [%d]}", strconv.Itoa(b.Batch), b.Steps))
	}
	s.Config = "{\n" + strings.Join(entries, ",\n") + "\n}\n"
	s.Notes = sglangNotes(s.Bands)
	return s, ""
}

// fillBands sets s's bands from the race's, each with the running batch it
// starts at and what it drafts (drafts: 0 for none, or why the engine's
// switch cannot run the configuration), and the model, environment and
// GPUs the bands share; it returns the bands' configurations, or why they
// are not one server of s.Engine (engineTitle in the words).
func fillBands(s *Setting, bands []Band, configs map[string]Config, engineTitle string, servable func(Config) string, drafts func(Config) (int, string)) ([]Config, string) {
	var cs []Config
	for i, b := range bands {
		c, ok := configs[b.Config]
		if !ok {
			return nil, fmt.Sprintf("the run does not record %s's flags", b.Config)
		}
		if why := servable(c); why != "" {
			return nil, why
		}
		batch := 1
		if i > 0 {
			n, ok := concurrency(b.From)
			if !ok {
				return nil, fmt.Sprintf("the band from %s is not at a concurrency, and %s switches by the running batch", b.From, engineTitle)
			}
			batch = n
		}
		k, why := drafts(c)
		if why != "" {
			return nil, why
		}
		s.Bands = append(s.Bands, BandSetting{Band: b, Batch: batch, Steps: k})
		if i == 0 {
			s.Model, s.Env, s.GPUCount = c.Model, c.Env, c.GPUCount
		}
		if why := sameServer(bands[0].Config, c, s); why != "" {
			return nil, why
		}
		cs = append(cs, c)
	}
	return cs, ""
}

// servable is why a configuration cannot be a band of one server of
// engine ("" when it can).
func servable(c Config, engine string) string {
	switch {
	case c.Engine != "" && c.Engine != engine || c.Engine == "" && engine != sglang:
		return fmt.Sprintf("%s runs %s, and the server that switches is %s's", c.Name, orDefault(c.Engine), engine)
	case len(c.Launch) > 0:
		return fmt.Sprintf("%s replaces the launch command, so bakeoff cannot tell its flags", c.Name)
	case len(c.Deployment) > 0 && string(c.Deployment) != "null":
		return fmt.Sprintf("%s is a deployment of several processes, not one server", c.Name)
	}
	return ""
}

func orDefault(engine string) string {
	if engine == "" {
		return sglang
	}
	return engine
}

// sameServer is why c cannot run in one server with the first band's
// configuration, named first, whose model, environment and GPUs s holds.
func sameServer(first string, c Config, s *Setting) string {
	switch {
	case c.Model != s.Model:
		return fmt.Sprintf("%s serves %s and %s serves %s: one server serves one model", first, s.Model, c.Name, c.Model)
	case !sameEnv(c.Env, s.Env):
		return fmt.Sprintf("%s and %s run with different environments, and one server has one", first, c.Name)
	case c.GPUCount != s.GPUCount:
		return fmt.Sprintf("%s and %s use different GPU counts, and one server has one", first, c.Name)
	}
	return ""
}

// sglangServable is why a configuration cannot be a band of an adaptive
// SGLang server ("" when it can).
func sglangServable(c Config) string {
	if why := servable(c, sglang); why != "" {
		return why
	}
	for _, a := range c.Args {
		if why, ok := sglangUnsupported[a.Key]; ok {
			return fmt.Sprintf("%s sets --%s, and SGLang drops adaptive decoding there: %s", c.Name, a.Key, why)
		}
	}
	return ""
}

// sglangSteps is the speculative steps a configuration runs per round, 0
// without speculation, or why adaptive decoding cannot run it.
func sglangSteps(c Config) (int, string) {
	alg, on := c.arg("speculative-algorithm")
	if !on {
		return 0, ""
	}
	switch strings.ToUpper(alg) {
	case "EAGLE", "EAGLE3", "NEXTN":
	default:
		return 0, fmt.Sprintf("%s runs speculative algorithm %s, and SGLang's adaptive decoding runs EAGLE and EAGLE3 only", c.Name, alg)
	}
	if k, set := c.arg("speculative-eagle-topk"); set && k != "1" {
		return 0, fmt.Sprintf("%s drafts a tree (topk %s), and SGLang's adaptive decoding runs topk 1 only", c.Name, k)
	}
	v, set := c.arg("speculative-num-steps")
	if !set {
		return 0, fmt.Sprintf("%s leaves speculative-num-steps to SGLang, so bakeoff cannot tell the steps it ran", c.Name)
	}
	steps, err := strconv.Atoi(v)
	if err != nil || steps < 1 {
		return 0, fmt.Sprintf("%s: speculative-num-steps %q is not a step count", c.Name, v)
	}
	if d, set := c.arg("speculative-num-draft-tokens"); set && d != strconv.Itoa(steps+1) {
		return 0, fmt.Sprintf("%s verifies %s draft tokens over %d steps, and SGLang's adaptive decoding verifies steps + 1", c.Name, d, steps)
	}
	return steps, ""
}

// nonSpec is args without the speculative flags.
func nonSpec(args []Arg) []Arg {
	return argsWithout(args, func(k string) bool { return strings.HasPrefix(k, "speculative-") })
}

// firstSteps is the steps of the first band that speculates, what the
// server starts with (SGLang requires --speculative-num-steps to be one
// of the candidates).
func firstSteps(bands []BandSetting) int {
	for _, b := range bands {
		if b.Steps > 0 {
			return b.Steps
		}
	}
	return 0
}

// switchNotes say where the setting put each switch that the race did not
// measure: between two levels, at the later one's concurrency.
func switchNotes(bands []BandSetting) []string {
	var notes []string
	for i := 1; i < len(bands); i++ {
		prev, b := bands[i-1], bands[i]
		if c, ok := concurrency(prev.To); ok && c+1 < b.Batch {
			notes = append(notes, fmt.Sprintf("The switch to %s is set at a batch of %d, the band's first level: the race measured no load between %s and %s.", b.Config, b.Batch, prev.To, b.From))
		}
	}
	return notes
}

// sglangNotes are switchNotes, what a band without speculation costs on
// SGLang, and how SGLang picks a round's band.
func sglangNotes(bands []BandSetting) []string {
	notes := switchNotes(bands)
	if i := slices.IndexFunc(bands, func(b BandSetting) bool { return b.Steps == 0 }); i >= 0 {
		b := bands[i]
		notes = append(notes, fmt.Sprintf("The band of %s runs 0 steps, which SGLang serves with its draft extend still running: slower than %s itself; a check measures by how much.", b.Config, b.Config))
	}
	return append(notes, "SGLang picks a round's band by its running batch, padded to the next CUDA-graph size; under a closed loop the batch is at most the concurrency.")
}
