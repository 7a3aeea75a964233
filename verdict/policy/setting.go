package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// Setting is the engine setting that serves a policy from one server: the
// engine switches between the bands' configurations by its running batch.
type Setting struct {
	// Engine is the engine profile's name (sglang, vllm).
	Engine string `json:"engine"`
	// Bands are the policy's bands, each with the running batch it starts
	// at (Batch) and the speculative steps (SGLang) or tokens (vLLM) it
	// drafts (Steps, 0 for none).
	Bands []BandSetting `json:"bands"`
	// Args are the policy's scenario's engine flags: the bands' common
	// flags and the switch's, with ConfigToken where the path of
	// ConfigFile goes.
	Args []Arg `json:"args"`
	// Env, Model and GPUCount are the bands' own.
	Env      map[string]string `json:"env,omitempty"`
	Model    string            `json:"model,omitempty"`
	GPUCount int               `json:"gpus,omitempty"`
	// ConfigFile names the file the switch reads (sglang-adaptive.json),
	// Config its contents; both empty where the setting is all in Args
	// (vLLM's).
	ConfigFile string `json:"config_file"`
	Config     string `json:"config"`
	// Notes say what the setting chooses that the race did not measure
	// (where between two levels the switch goes) and what it costs that
	// the fixed configurations do not.
	Notes []string `json:"notes,omitempty"`
	// Source cites the engine code the setting follows.
	Source string `json:"source"`
}

// BandSetting is one band as the engine runs it.
type BandSetting struct {
	Band
	Batch int `json:"batch"`
	Steps int `json:"steps"`
}

// Written is the policy as an engine setting, or why it is not one.
type Written struct {
	// Setting is nil when Why says what keeps the policy from being one
	// engine setting.
	Setting *Setting `json:"setting,omitempty"`
	Why     string   `json:"why,omitempty"`
}

// ScenarioName is the name of the scenario a written policy is served as,
// and the configuration a later race checks (Check).
const ScenarioName = "policy"

// ConfigToken stands in the written args for the path of the setting's
// file, which only the writer of the run directory knows.
const ConfigToken = "{policy_config}"

// Write is the policy of bands as one engine setting, from the bands'
// scenarios as the run recorded them. Nil for a policy of one band: one
// configuration serves every level and there is nothing to switch.
func Write(bands []Band, configs map[string]Config) *Written {
	if len(bands) < 2 {
		return nil
	}
	first, ok := configs[bands[0].Config]
	if !ok {
		return &Written{Why: fmt.Sprintf("the run does not record %s's flags", bands[0].Config)}
	}
	engine := first.Engine
	if engine == "" {
		engine = campaign.DefaultEngine
	}
	var s *Setting
	var why string
	switch engine {
	case sglang:
		s, why = sglangAdaptive(bands, configs)
	case vllm:
		s, why = vllmDynamic(bands, configs)
	default:
		why = fmt.Sprintf("bakeoff writes a switch by load for SGLang's adaptive and vLLM's dynamic speculative decoding, and %s runs %s", bands[0].Config, engine)
	}
	if why != "" {
		return &Written{Why: why}
	}
	return &Written{Setting: s}
}

// ScenarioYAML is the scenario file that serves the setting, with
// configPath, where the file ConfigFile is written, in its flags. header
// is written as its leading comment.
func (s *Setting) ScenarioYAML(configPath string, header []string) ([]byte, error) {
	var args yaml.Node
	args.Kind = yaml.MappingNode
	for _, a := range s.Args {
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: a.Key}
		var val *yaml.Node
		switch {
		case a.Bare || len(a.Values) == 0:
			val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
		case len(a.Values) == 1:
			val = str(strings.ReplaceAll(a.Values[0], ConfigToken, configPath))
		default:
			val = &yaml.Node{Kind: yaml.SequenceNode}
			for _, v := range a.Values {
				val.Content = append(val.Content, str(v))
			}
		}
		args.Content = append(args.Content, key, val)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	add("name", str(ScenarioName))
	add("engine", str(s.Engine))
	if s.Model != "" {
		add("model", str(s.Model))
	}
	if s.GPUCount > 0 {
		add("gpus", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(s.GPUCount)})
	}
	add("args", &args)
	if len(s.Env) > 0 {
		env := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			env.Content = append(env.Content, str(k), str(s.Env[k]))
		}
		add("env", env)
	}
	doc.HeadComment = strings.Join(header, "\n")
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}})
	if err != nil {
		return nil, fmt.Errorf("writing the policy's scenario: %w", err)
	}
	return out, nil
}

// str is a string scalar, quoted only where YAML would read it as another
// type.
func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
