package prompts

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestDistRoundTrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"512", "512"},
		{"fixed(64)", "64"},
		{"uniform(min=50,max=400)", "uniform(min=50,max=400)"},
		{" uniform( max=400 , min=50 ) ", "uniform(min=50,max=400)"},
		{"normal(mean=500,sd=100)", "normal(mean=500,sd=100,min=1)"},
		{"normal(mean=500.5,sd=0,min=10,max=2000)", "normal(mean=500.5,sd=0,min=10,max=2000)"},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.in)
		if err != nil {
			t.Errorf("ParseDist(%q): %v", tt.in, err)
			continue
		}
		if d.String() != tt.want {
			t.Errorf("ParseDist(%q) = %s, want %s", tt.in, d, tt.want)
		}
		again, err := ParseDist(d.String())
		if err != nil || again != d {
			t.Errorf("%s does not read back: %+v %v", d, again, err)
		}
	}
}

func TestDistErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "want 1 to"},
		{"lognormal(mean=3)", `distribution "lognormal"`},
		{"uniform(min=5)", "max missing"},
		{"uniform(min=500,max=5)", "above max"},
		{"uniform(min=5,max=50,min=6)", "once"},
		{"uniform(min=1.5,max=50)", "whole number"},
		{"normal(sd=3)", "mean missing"},
		{"normal(mean=10,sd=-1)", "sd -1"},
		{"normal(mean=5000,sd=1,max=100)", "within [1, 100]"},
		{"normal(mean=x,sd=1)", "not a number"},
		{"many", "want N"},
		{"99999999", "want 1 to"},
	}
	for _, tt := range tests {
		if _, err := ParseDist(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDist(%q): error %v, want %q", tt.in, err, tt.want)
		}
	}
}

// moments returns the mean and standard deviation of xs.
func moments(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}

// TestSyntheticLengths checks that a synthetic set's lengths follow the
// distributions asked for: the input measured in words × TokensPerWord
// (what the set promises), the output as the max_tokens each prompt sends.
// With 4000 prompts the standard error of a mean is sd/63, so the 3%
// tolerances below hold by a wide margin for a right generator and fail a
// wrong kind, scale or bound.
func TestSyntheticLengths(t *testing.T) {
	tests := []struct {
		name, input, output string
		inMean, inSD        float64 // what the input lengths must show
		outMean, outSD      float64
		inLo, inHi          int // bounds every input length must keep (tokens, ± one word's rounding)
		outLo, outHi        int
	}{
		{"normal in, uniform out", "normal(mean=600,sd=150,min=10,max=4000)", "uniform(min=100,max=300)",
			600, 150, 200, math.Sqrt(201*201-1) / math.Sqrt(12), 10, 4000, 100, 300},
		{"fixed in, fixed out", "300", "128", 300, 0, 128, 0, 300, 300, 128, 128},
		{"uniform in, normal out", "uniform(min=50,max=1050)", "normal(mean=256,sd=64,min=1)",
			550, 1000 / math.Sqrt(12), 256, 64, 50, 1050, 1, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := ParseSynthetic("count=4000 input=" + tt.input + " output=" + tt.output)
			if err != nil {
				t.Fatal(err)
			}
			set, err := Synthesize(spec, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Prompts) != 4000 || set.Name != Synthetic {
				t.Fatalf("%d prompts named %q", len(set.Prompts), set.Name)
			}
			var in, out []float64
			for _, p := range set.Prompts {
				words := len(strings.Fields(p.Text))
				if words != TokensToWords(int(math.Round(float64(words)*TokensPerWord))) {
					t.Fatalf("prompt of %d words is no whole length", words)
				}
				tok := float64(words) * TokensPerWord
				if tok < float64(tt.inLo)-TokensPerWord || tok > float64(tt.inHi)+TokensPerWord {
					t.Fatalf("input %.0f tokens outside [%d, %d]", tok, tt.inLo, tt.inHi)
				}
				if p.MaxTokens < tt.outLo || p.MaxTokens > tt.outHi || p.MaxTokens != p.OutputTokens {
					t.Fatalf("max_tokens %d (recorded %d) outside [%d, %d]", p.MaxTokens, p.OutputTokens, tt.outLo, tt.outHi)
				}
				in = append(in, tok)
				out = append(out, float64(p.MaxTokens))
			}
			check := func(what string, xs []float64, wantMean, wantSD float64) {
				m, sd := moments(xs)
				// The input is cut to whole words: up to ±2/3 token of
				// rounding per prompt, which adds at most 0.4 to its sd.
				if math.Abs(m-wantMean) > 0.03*wantMean || math.Abs(sd-wantSD) > 0.03*wantSD+0.5 {
					t.Errorf("%s: mean %.1f sd %.1f, want %.1f and %.1f", what, m, sd, wantMean, wantSD)
				}
			}
			check("input", in, tt.inMean, tt.inSD)
			check("output", out, tt.outMean, tt.outSD)
		})
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	spec, err := ParseSynthetic("input=normal(mean=200,sd=50) output=uniform(min=10,max=20)")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Count != DefaultSyntheticCount {
		t.Errorf("count %d, want the default %d", spec.Count, DefaultSyntheticCount)
	}
	a, _ := Synthesize(spec, 1)
	b, _ := Synthesize(spec, 1)
	c, _ := Synthesize(spec, 2)
	if a.Hash != b.Hash {
		t.Error("the same seed gives different sets")
	}
	for i := range a.Prompts {
		if a.Prompts[i].Text != b.Prompts[i].Text || a.Prompts[i].MaxTokens != b.Prompts[i].MaxTokens {
			t.Fatalf("prompt %d differs between two sets of the same seed", i)
		}
	}
	if a.Hash == c.Hash {
		t.Error("another seed gives the same set")
	}
	// Prompts start at different words, so they do not share a prefix
	// for a prefix cache to serve.
	starts := map[string]bool{}
	for _, p := range a.Prompts {
		starts[strings.Join(strings.Fields(p.Text)[:min(3, len(strings.Fields(p.Text)))], " ")] = true
	}
	if len(starts) < len(a.Prompts)*9/10 {
		t.Errorf("only %d distinct openings in %d prompts", len(starts), len(a.Prompts))
	}
	other := spec
	other.Output = Dist{Kind: DistFixed, Value: 15}
	d, _ := Synthesize(other, 1)
	if d.Hash == a.Hash {
		t.Error("another output distribution gives the same hash")
	}
}

func TestSyntheticTooBig(t *testing.T) {
	spec := SyntheticSpec{Count: MaxSyntheticCount, Input: Dist{Kind: DistFixed, Value: 1000}, Output: Dist{Kind: DistFixed, Value: 1}}
	if _, err := Synthesize(spec, 1); err == nil || !strings.Contains(err.Error(), "tokens in all") {
		t.Errorf("error %v, want the total bounded", err)
	}
}

func TestParseSyntheticErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"input=10", "want input=DIST and output=DIST"},
		{"count=0 input=10 output=10", "count 0"},
		{"input=10 output=10 input=20", "twice"},
		{"input=10 output=10 colour=red", "want count=N"},
		{"input=10 output=uniform(min=3)", "output: length"},
	}
	for _, tt := range tests {
		if _, err := ParseSynthetic(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSynthetic(%q): error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestDistDrawStaysInBounds(t *testing.T) {
	// A normal cut tight around its mean: every draw is inside the bounds.
	d := Dist{Kind: DistNormal, Mean: 100, SD: 1000, Min: 90, Max: 110}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		if n := d.Draw(r); n < 90 || n > 110 {
			t.Fatalf("draw %d outside [90, 110]", n)
		}
	}
}

func TestCategoriesAndRecordedLengths(t *testing.T) {
	in := `{"prompt": "write code", "category": "code", "output_tokens": 300}
{"id": "x1", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "one two three four five six"}], "category": "chat"}
{"messages": [{"role": "user", "content": "no answer"}]}
`
	s, err := Parse("w.jsonl", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		cat       string
		recorded  int
		maxTokens int
	}{
		{"code", 300, 0},
		{"chat", WordsToTokens(6), 0}, // six words of answer: 8 tokens
		{"", 0, 0},
	}
	for i, w := range want {
		p := s.Prompts[i]
		if p.Category != w.cat || p.OutputTokens != w.recorded || p.MaxTokens != 0 {
			t.Errorf("prompt %d: category %q recorded %d max %d, want %q %d 0", i, p.Category, p.OutputTokens, p.MaxTokens, w.cat, w.recorded)
		}
	}
	if WordsToTokens(6) != 8 {
		t.Errorf("6 words are %d tokens, want 8 (4/3 per word)", WordsToTokens(6))
	}
	if got := s.Categories(); strings.Join(got, ",") != "code,chat" {
		t.Errorf("categories %v", got)
	}
	if s.Unrecorded() != 1 {
		t.Errorf("%d unrecorded, want 1", s.Unrecorded())
	}
	r := s.WithRecordedLengths()
	if r.Prompts[0].MaxTokens != 300 || r.Prompts[1].MaxTokens != 8 || r.Prompts[2].MaxTokens != 0 {
		t.Errorf("recorded max_tokens %d %d %d", r.Prompts[0].MaxTokens, r.Prompts[1].MaxTokens, r.Prompts[2].MaxTokens)
	}
	if got := r.MeanMaxTokens(10); got != 106 { // (300 + 8 + 10) / 3
		t.Errorf("mean max_tokens %v, want 106", got)
	}
	if r.Hash == s.Hash || s.Prompts[0].MaxTokens != 0 {
		t.Error("recorded lengths do not reach the hash, or changed the original set")
	}
	// The recorded length alone sends nothing different: not hashed. A
	// category is a label the reports group by: hashed.
	plain, _ := Parse("p", []byte(`{"prompt": "write code", "category": "code"}`))
	withLen, _ := Parse("p", []byte(`{"prompt": "write code", "category": "code", "output_tokens": 5}`))
	noCat, _ := Parse("p", []byte(`{"prompt": "write code"}`))
	if plain.Hash != withLen.Hash {
		t.Error("an unused recorded length changes the hash")
	}
	if plain.Hash == noCat.Hash {
		t.Error("the category does not reach the hash")
	}
}

func TestParseWorkloadErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"zero output", `{"prompt": "a", "output_tokens": 0}`, "output_tokens 0"},
		{"empty category", `{"prompt": "a", "category": ""}`, "category"},
		{"padded category", `{"prompt": "a", "category": " code"}`, "leading or trailing space"},
		{"long category", `{"prompt": "a", "category": "` + strings.Repeat("x", 41) + `"}`, "longer than 40"},
		{"control category", `{"prompt": "a", "category": "a\tb"}`, "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse("f.jsonl", []byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestMake(t *testing.T) {
	files := map[string][]byte{"/p.jsonl": []byte(`{"prompt": "a", "output_tokens": 7}` + "\n" + `{"prompt": "b"}`)}
	read := func(p string) ([]byte, error) { return files[p], nil }
	syn := &SyntheticSpec{Count: 3, Input: Dist{Kind: DistFixed, Value: 20}, Output: Dist{Kind: DistFixed, Value: 9}}
	tests := []struct {
		name    string
		spec    Spec
		want    string // prompts' max_tokens, or the error
		wantErr bool
	}{
		{"builtin", Spec{}, "", false},
		{"file", Spec{File: "/p.jsonl"}, "0,0", false},
		{"file, recorded", Spec{File: "/p.jsonl", OutputLengths: OutputRecorded}, "7,0", false},
		{"synthetic", Spec{Synthetic: syn}, "9,9,9", false},
		{"synthetic with a file", Spec{File: "/p.jsonl", Synthetic: syn}, "takes no file", true},
		{"synthetic with output lengths", Spec{Synthetic: syn, OutputLengths: OutputRecorded}, "takes no output_lengths", true},
		{"unknown output lengths", Spec{OutputLengths: "longest"}, `output lengths "longest"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Make(tt.spec, 1, read)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				return
			}
			var got []string
			for _, p := range set.Prompts {
				got = append(got, strconv.Itoa(p.MaxTokens))
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("max_tokens %v, want %s", got, tt.want)
			}
		})
	}
}
