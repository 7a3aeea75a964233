package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

const vllm = engine.VLLM

// vLLM switches its speculative token count by the running batch with
// num_speculative_tokens_per_batch_size in --speculative-config: a list of
// [range_start, range_end, K], the first range starting at 1, the ranges
// sorted and not overlapping, K ≥ 0 (0: no drafting), a gap between two
// ranges and the batches after the last taking the K before them, every K
// capped at the config's num_speculative_tokens (vllm/v1/spec_decode/
// dynamic/utils.py: validate_and_normalize_dynamic_sd_schedule,
// build_dynamic_sd_schedule_lookup; the key in vllm/config/speculative.py).
const vllmSource = "vLLM's dynamic speculative decoding (num_speculative_tokens_per_batch_size in --speculative-config, vllm/v1/spec_decode/dynamic/utils.py)"

// vllmDynamic writes the bands as one vLLM server whose speculative config
// gives each band its token count, or says why it cannot: the bands must
// run one speculative config but for num_speculative_tokens, or none, over
// the same other flags.
func vllmDynamic(bands []Band, configs map[string]Config) (*Setting, string) {
	s := &Setting{Engine: vllm, Source: vllmSource}
	var read []map[string]any // each band's speculative config, nil for none
	tokens := func(c Config) (int, string) {
		k, cfg, why := vllmTokens(c)
		read = append(read, cfg)
		return k, why
	}
	cs, why := fillBands(s, bands, configs, "vLLM", func(c Config) string { return servable(c, vllm) }, tokens)
	if why != "" {
		return nil, why
	}
	var spec *Config
	var specJSON map[string]any
	for i, c := range cs {
		cfg := read[i]
		switch {
		case s.Bands[i].Steps == 0:
		case spec == nil:
			spec, specJSON = &cs[i], cfg
		case !maps.EqualFunc(withoutTokens(cfg), withoutTokens(specJSON), jsonEqual):
			return nil, fmt.Sprintf("%s and %s run different speculative configs, and vLLM's dynamic speculative decoding switches num_speculative_tokens alone", spec.Name, c.Name)
		}
	}
	if spec == nil {
		return nil, "no band speculates, so there is nothing for vLLM's dynamic speculative decoding to switch"
	}
	common := spec.without(func(k string) bool { return k == "speculative-config" })
	for _, b := range s.Bands {
		own := configs[b.Config].without(func(k string) bool { return k == "speculative-config" })
		if !sameArgs(own, common) {
			return nil, fmt.Sprintf("%s and %s differ in %s, and vLLM's dynamic speculative decoding switches num_speculative_tokens alone", spec.Name, b.Config, argDiff(own, common))
		}
	}
	most := 0
	var ranges [][3]int
	for i, b := range s.Bands {
		end := b.Batch // the last range: later batches carry its K forward
		if i+1 < len(s.Bands) {
			end = s.Bands[i+1].Batch - 1
		}
		ranges = append(ranges, [3]int{b.Batch, end, b.Steps})
		most = max(most, b.Steps)
	}
	out := maps.Clone(specJSON)
	out["num_speculative_tokens"] = most
	out["num_speculative_tokens_per_batch_size"] = ranges
	text, err := json.Marshal(out) // one line, the keys sorted
	if err != nil {
		return nil, fmt.Sprintf("writing the speculative config: %v", err)
	}
	s.Args = append(slices.Clone(common), Arg{Key: "speculative-config", Values: []string{string(text)}})
	slices.SortFunc(s.Args, func(a, b Arg) int { return strings.Compare(a.Key, b.Key) })
	s.Notes = switchNotes(s.Bands)
	for _, b := range s.Bands {
		if b.Steps == 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("The band of %s drafts 0 tokens on a server that loads the drafter: whether vLLM then runs as fast as %s itself was not read; a check measures it.", b.Config, b.Config))
			break
		}
	}
	s.Notes = append(s.Notes, "vLLM picks a step's tokens by its running batch; under a closed loop the batch is at most the concurrency.")
	return s, ""
}

// vllmTokens is the speculative tokens a configuration drafts per step
// (num_speculative_tokens of its --speculative-config), 0 without one, with
// the config read; or why bakeoff cannot tell.
func vllmTokens(c Config) (int, map[string]any, string) {
	v, on := c.arg("speculative-config")
	if !on {
		return 0, nil, ""
	}
	var cfg map[string]any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&cfg); err != nil {
		return 0, nil, fmt.Sprintf("%s's --speculative-config is not a JSON object bakeoff can read (%v)", c.Name, err)
	}
	if _, set := cfg["num_speculative_tokens_per_batch_size"]; set {
		return 0, nil, fmt.Sprintf("%s already switches its tokens by batch size", c.Name)
	}
	n, _ := cfg["num_speculative_tokens"].(json.Number)
	k, err := strconv.Atoi(string(n))
	if err != nil || k < 1 {
		return 0, nil, fmt.Sprintf("%s's --speculative-config sets no num_speculative_tokens bakeoff can read", c.Name)
	}
	return k, cfg, ""
}

func withoutTokens(cfg map[string]any) map[string]any {
	out := maps.Clone(cfg)
	delete(out, "num_speculative_tokens")
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
