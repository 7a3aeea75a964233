package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/verdict/selection"
)

func args(kv ...string) []Arg {
	var out []Arg
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Arg{Key: kv[i], Values: []string{kv[i+1]}})
	}
	return out
}

// chain is an EAGLE-3 chain of steps steps (topk 1), with extra flags.
func chain(steps int, extra ...string) Config {
	name := "eagle3.steps" + strconv.Itoa(steps) + ".topk1"
	return Config{Name: name, Engine: "sglang", Model: "/models/m", GPUCount: 2, Args: args(append([]string{
		"tp-size", "2",
		"speculative-algorithm", "EAGLE3",
		"speculative-draft-model-path", "/models/draft",
		"speculative-num-steps", strconv.Itoa(steps),
		"speculative-eagle-topk", "1",
		"speculative-num-draft-tokens", strconv.Itoa(steps + 1),
	}, extra...)...)}
}

var baseline = Config{Name: "baseline", Engine: "sglang", Model: "/models/m", GPUCount: 2, Args: args("tp-size", "2")}

func set(cs ...Config) map[string]Config {
	out := map[string]Config{}
	for _, c := range cs {
		out[c.Name] = c
	}
	return out
}

func bandsOf(kv ...string) []Band {
	var out []Band
	for i := 0; i < len(kv); i += 3 {
		out = append(out, Band{Config: kv[i], From: kv[i+1], To: kv[i+2]})
	}
	return out
}

func TestWrite(t *testing.T) {
	tree := chain(2)
	tree.Name = "eagle3.steps2.topk2"
	tree.Args = args("tp-size", "2", "speculative-algorithm", "EAGLE3", "speculative-draft-model-path", "/models/draft",
		"speculative-num-steps", "2", "speculative-eagle-topk", "2", "speculative-num-draft-tokens", "5")
	otherDraft := chain(1)
	otherDraft.Args[2].Values = []string{"/models/other"}
	wide := baseline
	wide.Name, wide.Args = "wide", args("tp-size", "4")
	vllmConfig := Config{Name: "v", Engine: "vllm"}
	dp := chain(1, "enable-dp-attention", "true")
	for _, tc := range []struct {
		name    string
		bands   []Band
		configs map[string]Config
		config  string // the adaptive config written
		why     string // else, in why it is not one setting
	}{
		{name: "chains then speculation off",
			bands:   bandsOf("eagle3.steps3.topk1", "C=1", "C=1", "eagle3.steps2.topk1", "C=4", "C=4", "baseline", "C=16", "C=64"),
			configs: set(chain(3), chain(2), baseline),
			config:  `{"1": {"candidate_steps": [3]}, "4": {"candidate_steps": [2]}, "16": {"candidate_steps": [0]}}`},
		{name: "speculation off at low load",
			bands:   bandsOf("baseline", "C=1", "C=4", "eagle3.steps1.topk1", "C=16", "C=16"),
			configs: set(chain(1), baseline),
			config:  `{"1": {"candidate_steps": [0]}, "16": {"candidate_steps": [1]}}`},
		{name: "a tree", bands: bandsOf("eagle3.steps2.topk2", "C=1", "C=1", "baseline", "C=4", "C=64"),
			configs: set(tree, baseline), why: "eagle3.steps2.topk2 drafts a tree (topk 2), and SGLang's adaptive decoding runs topk 1 only"},
		{name: "another draft model", bands: bandsOf("eagle3.steps2.topk1", "C=1", "C=1", "eagle3.steps1.topk1", "C=4", "C=64"),
			configs: set(chain(2), otherDraft), why: "differ in --speculative-draft-model-path"},
		{name: "another tp", bands: bandsOf("eagle3.steps2.topk1", "C=1", "C=1", "wide", "C=4", "C=64"),
			configs: set(chain(2), wide), why: "differ in --tp-size"},
		{name: "no speculation", bands: bandsOf("baseline", "C=1", "C=1", "wide", "C=4", "C=64"),
			configs: set(baseline, wide), why: "no band speculates"},
		{name: "another engine", bands: bandsOf("v", "C=1", "C=1", "baseline", "C=4", "C=64"),
			configs: set(vllmConfig, baseline), why: "baseline runs sglang, and the server that switches is vllm's"},
		{name: "an engine without a switch", bands: bandsOf("t", "C=1", "C=1", "u", "C=4", "C=64"),
			configs: set(Config{Name: "t", Engine: "trtllm"}, Config{Name: "u", Engine: "trtllm"}), why: "and t runs trtllm"},
		{name: "DP attention", bands: bandsOf("eagle3.steps1.topk1", "C=1", "C=1", "baseline", "C=4", "C=64"),
			configs: set(dp, baseline), why: "attention DP is not supported"},
		{name: "unrecorded", bands: bandsOf("eagle3.steps1.topk1", "C=1", "C=1", "gone", "C=4", "C=64"),
			configs: set(chain(1)), why: "the run does not record gone's flags"},
		{name: "a rate", bands: bandsOf("eagle3.steps1.topk1", "1 req/s", "1 req/s", "baseline", "4 req/s", "4 req/s"),
			configs: set(chain(1), baseline), why: "not at a concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := Write(tc.bands, tc.configs)
			if w == nil {
				t.Fatal("nothing written")
			}
			if tc.why != "" {
				if w.Setting != nil || !strings.Contains(w.Why, tc.why) {
					t.Fatalf("written %+v, why %q; want why containing %q", w.Setting, w.Why, tc.why)
				}
				return
			}
			if w.Setting == nil {
				t.Fatalf("not written: %s", w.Why)
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if got := w.Setting.Config; squash(got) != squash(tc.config) {
				t.Errorf("config %s, want %s", got, tc.config)
			}
		})
	}
	if w := Write(bandsOf("baseline", "C=1", "C=64"), set(baseline)); w != nil {
		t.Errorf("one band written: %+v", w)
	}
}

// TestScenarioYAML loads the written scenario the way a campaign does: the
// speculative flags of the first band, its steps, topk 1 and the switch,
// with no draft-token count (SGLang sets steps + 1).
func TestScenarioYAML(t *testing.T) {
	c := chain(3)
	c.Env = map[string]string{"SGLANG_X": "1"}
	b := baseline
	b.Env = c.Env
	w := Write(bandsOf("eagle3.steps3.topk1", "C=1", "C=1", "baseline", "C=4", "C=64"), set(c, b))
	if w.Setting == nil {
		t.Fatal(w.Why)
	}
	data, err := w.Setting.ScenarioYAML("/runs/x/policy/sglang-adaptive.json", []string{"the header"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := campaign.LoadScenario(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.HasPrefix(string(data), "# the header\n") {
		t.Errorf("no header:\n%s", data)
	}
	got := map[string]string{}
	for _, a := range s.Args {
		got[a.Key] = strings.Join(a.Values, ",")
	}
	want := map[string]string{
		"tp-size": "2", "speculative-algorithm": "EAGLE3", "speculative-draft-model-path": "/models/draft",
		"speculative-num-steps": "3", "speculative-eagle-topk": "1", "speculative-adaptive": "",
		"speculative-adaptive-config": "/runs/x/policy/sglang-adaptive.json",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("args %v\nwant %v", got, want)
	}
	if s.Name != ScenarioName || s.Model != "/models/m" || s.Env["SGLANG_X"] != "1" || s.GPUCount != 2 {
		t.Errorf("scenario %+v", s)
	}
}

func TestBands(t *testing.T) {
	res := &selection.Result{Levels: []selection.LevelResult{
		{Level: "C=1", Selected: "a"}, {Level: "C=4", Selected: "b"}, {Level: "C=16", Selected: "b"}, {Level: "C=64"}, {Level: "C=128", Selected: "a"},
	}}
	got := Bands(res)
	want := bandsOf("a", "C=1", "C=1", "b", "C=4", "C=16", "a", "C=128", "C=128")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bands %+v", got)
	}
	if s := Sentence(got); s != "Serve a up to C=1, b from C=4 to C=16, a from C=128." {
		t.Errorf("sentence %q", s)
	}
	if s := Sentence(got[:1]); s != "Serve a at every level." {
		t.Errorf("sentence %q", s)
	}
}

func TestCheck(t *testing.T) {
	conf := &selection.Interval{Pct: 2, LoPct: 1, HiPct: 3, Rounds: 1}
	res := &selection.Result{Done: true, Options: selection.Options{Delta: 0.04}, Levels: []selection.LevelResult{
		{Level: "C=1", Selected: "policy", Live: []string{"policy"}, RunnerUp: "eagle3", Advantage: conf},
		{Level: "C=4", Selected: "eagle3", Live: []string{"eagle3", "policy"}, Near: []string{"eagle3", "policy"}},
		// Ruled out when the allowance closed, 0.3% behind: as good as
		// the best by the race's zone.
		{Level: "C=16", Selected: "eagle3", Live: []string{"eagle3"}},
		{Level: "C=64", Selected: "baseline", Live: []string{"baseline"}, RunnerUp: "policy", Advantage: &selection.Interval{Pct: 9, LoPct: 7, HiPct: 11}},
	}, Eliminations: []selection.Elimination{
		{Config: "policy", Level: "C=16", Round: 5, By: "eagle3", GapPct: 0.3},
		{Config: "policy", Level: "C=64", Round: 3, By: "baseline", GapPct: 10.5},
	}}
	c := Check(res)
	if c == nil || c.Delivers {
		t.Fatalf("check %+v", c)
	}
	outcomes := []string{}
	for _, l := range c.Levels {
		outcomes = append(outcomes, l.Outcome)
	}
	if strings.Join(outcomes, " ") != "best within within short" {
		t.Errorf("outcomes %v", outcomes)
	}
	if l := c.Levels[3]; l.Confirmed == nil || l.Confirmed.Pct != -9 || l.Confirmed.LoPct != -11 {
		t.Errorf("C=64 confirmed %+v", l.Confirmed)
	}
	want := "The policy falls short at C=64 (baseline ahead by 10.5%, ruled out after round 3; confirmed -9.0% [-11.0, -7.0]); it is the best or within ±4% of it at C=1, C=4, C=16."
	if s := c.Sentence(); s != want {
		t.Errorf("sentence\n%s\nwant\n%s", s, want)
	}
	res.Levels, res.Eliminations = res.Levels[:3], res.Eliminations[:1]
	if c := Check(res); !c.Delivers || c.Sentence() != "The policy delivers the best of the fixed configurations at every level: the best or within the race's ±4% of it." {
		t.Errorf("delivers: %+v %s", c, c.Sentence())
	}
	res.Levels[1].Live, res.Levels[1].Near = []string{"eagle3", "policy"}, []string{"eagle3"}
	if c := Check(res); c.Delivers || c.Sentence() != "The policy is not settled at C=4; it is the best or within ±4% of it at C=1, C=16." {
		t.Errorf("open: %s", c.Sentence())
	}
	res.Levels[0].Selected, res.Levels[0].Live = "eagle3", []string{"eagle3"}
	res.Levels[1].Live, res.Eliminations = []string{"eagle3"}, nil
	if c := Check(res); c != nil {
		t.Errorf("a race without a policy checked: %+v", c)
	}
}

// vllmSpec is a vLLM EAGLE-3 configuration drafting k tokens (none for 0).
func vllmSpec(name string, k int, extra ...string) Config {
	c := Config{Name: name, Engine: "vllm", Model: "/m", Args: args(append([]string{"tensor-parallel-size", "8", "max-num-seqs", "256"}, extra...)...)}
	if k > 0 {
		c.Args = append(c.Args, Arg{Key: "speculative-config", Values: []string{
			fmt.Sprintf(`{"method": "eagle3", "model": "/d", "num_speculative_tokens": %d}`, k)}})
	}
	return c
}

// TestWriteVLLM: a vLLM policy is one --speculative-config whose
// num_speculative_tokens_per_batch_size gives each band its tokens (the
// last range one batch long: vLLM carries its K to every larger batch) and
// num_speculative_tokens the most of them; configurations that differ in
// anything but the tokens are refused with the difference named.
func TestWriteVLLM(t *testing.T) {
	w := Write(bandsOf("k4", "C=1", "C=1", "k2", "C=4", "C=16", "off", "C=64", "C=64"),
		set(vllmSpec("k4", 4), vllmSpec("k2", 2), vllmSpec("off", 0)))
	if w == nil || w.Setting == nil {
		t.Fatalf("not written: %+v", w)
	}
	var cfg string
	for _, a := range w.Setting.Args {
		if a.Key == "speculative-config" {
			cfg = a.Values[0]
		}
	}
	want := `{"method":"eagle3","model":"/d","num_speculative_tokens":4,"num_speculative_tokens_per_batch_size":[[1,3,4],[4,63,2],[64,64,0]]}`
	if cfg != want || w.Setting.ConfigFile != "" {
		t.Errorf("speculative config %s (file %q)\nwant %s", cfg, w.Setting.ConfigFile, want)
	}
	for _, tc := range []struct {
		name    string
		configs map[string]Config
		why     string
	}{
		{"another drafter", set(vllmSpec("k4", 4), vllmSpec("k2", 0, "speculative-config", `{"method": "ngram", "num_speculative_tokens": 2}`), vllmSpec("off", 0)),
			"k4 and k2 run different speculative configs"},
		{"another flag", set(vllmSpec("k4", 4), vllmSpec("k2", 2), vllmSpec("off", 0, "enforce-eager", "true")),
			"differ in --enforce-eager"},
		{"unreadable", set(vllmSpec("k4", 0, "speculative-config", "{method: eagle3"), vllmSpec("k2", 2), vllmSpec("off", 0)),
			"k4's --speculative-config is not a JSON object"},
		{"no speculation", set(vllmSpec("k4", 0), vllmSpec("k2", 0), vllmSpec("off", 0)), "no band speculates"},
	} {
		w := Write(bandsOf("k4", "C=1", "C=1", "k2", "C=4", "C=16", "off", "C=64", "C=64"), tc.configs)
		if w == nil || w.Setting != nil || !strings.Contains(w.Why, tc.why) {
			t.Errorf("%s: %+v, want why containing %q", tc.name, w, tc.why)
		}
	}
}
