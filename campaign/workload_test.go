package campaign

import (
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/prompts"
)

// withPrompts is goodFiles with the sweep's prompts key set to yaml (one
// or more lines indented under sweep) and extra files.
func withPrompts(yaml string, extra memFiles) memFiles {
	over := memFiles{cfgPath: strings.Replace(goodFiles[cfgPath], "max_tokens: 50", "max_tokens: 50\n"+yaml, 1)}
	for k, v := range extra {
		over[k] = v
	}
	return goodFiles.with(over)
}

const recordedJSONL = `{"prompt": "a", "category": "code", "output_tokens": 90}
{"conversations": [{"from": "human", "value": "b"}, {"from": "gpt", "value": "three words here"}], "category": "chat"}
{"prompt": "c"}
`

func TestLoadWorkload(t *testing.T) {
	jsonl := memFiles{"c/configs/w.jsonl": recordedJSONL}
	plain, errs := loadMem(t, withPrompts("  prompts: w.jsonl", jsonl))
	if errs != nil {
		t.Fatal(errs)
	}
	recorded, errs := loadMem(t, withPrompts("  prompts: {file: w.jsonl, output_lengths: recorded}", jsonl))
	if errs != nil {
		t.Fatal(errs)
	}
	if recorded.Sweep.OutputLengths != prompts.OutputRecorded || recorded.Sweep.Prompts != plain.Sweep.Prompts {
		t.Errorf("sweep %+v", recorded.Sweep)
	}
	if recorded.PromptHash == plain.PromptHash || recorded.Fingerprint() == plain.Fingerprint() {
		t.Error("recorded output lengths do not change the hash and the fingerprint")
	}
	if !slices.ContainsFunc(recorded.Warnings, func(w string) bool {
		return strings.Contains(w, "1 of 3 prompts record no output length; they ask for max_tokens 50")
	}) {
		t.Errorf("no warning about the prompt without a length: %q", recorded.Warnings)
	}
	explicit, errs := loadMem(t, withPrompts("  prompts: {file: w.jsonl, output_lengths: max_tokens}", jsonl))
	if errs != nil {
		t.Fatal(errs)
	}
	if explicit.Fingerprint() != plain.Fingerprint() {
		t.Error("output_lengths: max_tokens differs from leaving it out")
	}

	// The two spellings of a synthetic set are the same set.
	text, errs := loadMem(t, withPrompts(`  prompts:
    synthetic:
      count: 40
      input_tokens: normal(mean=300,sd=50,max=600)
      output_tokens: 64`, nil))
	if errs != nil {
		t.Fatal(errs)
	}
	mapped, errs := loadMem(t, withPrompts(`  prompts:
    synthetic:
      count: 40
      input_tokens: {dist: normal, mean: 300, sd: 50, max: 600}
      output_tokens: {dist: fixed, value: 64}`, nil))
	if errs != nil {
		t.Fatal(errs)
	}
	want := "count=40 input=normal(mean=300,sd=50,min=1,max=600) output=64"
	if text.Sweep.Synthetic == nil || text.Sweep.Synthetic.String() != want || mapped.Sweep.Synthetic.String() != want {
		t.Fatalf("synthetic %v and %v, want %s", text.Sweep.Synthetic, mapped.Sweep.Synthetic, want)
	}
	if text.PromptHash != mapped.PromptHash || text.Fingerprint() != mapped.Fingerprint() {
		t.Error("the two spellings give different sets")
	}
	set, err := text.Sweep.PromptSet()
	if err != nil || set.Hash != text.PromptHash {
		t.Errorf("PromptSet rebuilds another set: %v", err)
	}
	// The seed draws the set: another seed, another set.
	reseeded, errs := loadMem(t, withPrompts(`  seed: 9
  prompts: {synthetic: {count: 40, input_tokens: "normal(mean=300,sd=50,max=600)", output_tokens: 64}}`, nil))
	if errs != nil {
		t.Fatal(errs)
	}
	if reseeded.PromptHash == text.PromptHash {
		t.Error("another seed gives the same synthetic set")
	}
}

func TestLoadWorkloadErrors(t *testing.T) {
	jsonl := memFiles{"c/configs/w.jsonl": recordedJSONL}
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "  prompts: {file: w.jsonl, lengths: recorded}", `sweep.prompts: unknown key "lengths"`},
		{"bad output_lengths", "  prompts: {file: w.jsonl, output_lengths: longest}", `sweep.prompts.output_lengths: "longest": want max_tokens or recorded`},
		{"synthetic and file", "  prompts: {file: w.jsonl, synthetic: {input_tokens: 10, output_tokens: 10}}", "give file or synthetic, not both"},
		{"synthetic and output_lengths", "  prompts: {output_lengths: recorded, synthetic: {input_tokens: 10, output_tokens: 10}}", "always asks for its drawn output lengths"},
		{"no input", "  prompts: {synthetic: {output_tokens: 10}}", "input_tokens missing"},
		{"bad dist text", "  prompts: {synthetic: {input_tokens: 'uniform(min=5)', output_tokens: 10}}", "synthetic.input_tokens: length \"uniform(min=5)\": max missing"},
		{"bad dist mapping", "  prompts: {synthetic: {input_tokens: {dist: uniform, min: 50, max: 5}, output_tokens: 10}}", "min 50 is above max 5"},
		{"no dist kind", "  prompts: {synthetic: {input_tokens: {mean: 5}, output_tokens: 10}}", "dist missing"},
		{"zero count", "  prompts: {synthetic: {count: 0, input_tokens: 10, output_tokens: 10}}", "count: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := loadMem(t, withPrompts(tt.yaml, jsonl))
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("errors %q, want one with %q", errs, tt.want)
			}
		})
	}
}

func TestWorkloadWarnsWithoutIgnoreEOS(t *testing.T) {
	c, errs := loadMem(t, withPrompts("  ignore_eos: false\n  prompts: {synthetic: {input_tokens: 10, output_tokens: 10}}", nil))
	if errs != nil {
		t.Fatal(errs)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "ignore_eos false") }) {
		t.Errorf("no ignore_eos warning: %q", c.Warnings)
	}
}
