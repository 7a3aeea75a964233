package prompts

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Synthetic names a synthetic set.
const Synthetic = "synthetic"

// DefaultSyntheticCount is how many prompts a synthetic set holds when its
// count is not given: enough distinct prompts that the length distributions
// show, few enough that building the set is instant.
const DefaultSyntheticCount = 200

// MaxSyntheticCount bounds a synthetic set's size.
const MaxSyntheticCount = 100000

// MaxSyntheticTokens bounds a synthetic set's input tokens in all: the set
// and its encoded requests are held in memory (about 15 MB each per million
// tokens), on the host too.
const MaxSyntheticTokens = 20_000_000

// syntheticStream separates the synthetic set's random stream from the
// prompt order's, which is seeded with the same sweep seed.
const syntheticStream = 0x5e7_0f_1e75

// SyntheticSpec describes a synthetic set: Count prompts whose lengths are
// drawn from Input (prompt length) and Output (max_tokens), in tokens.
type SyntheticSpec struct {
	Count  int
	Input  Dist
	Output Dist
}

// Check reports what is wrong with the spec, or nil.
func (s SyntheticSpec) Check() error {
	var errs []error
	if s.Count < 1 || s.Count > MaxSyntheticCount {
		errs = append(errs, fmt.Errorf("count %d: want 1 to %d", s.Count, MaxSyntheticCount))
	}
	if err := s.Input.Check(); err != nil {
		errs = append(errs, fmt.Errorf("input: %w", err))
	}
	if err := s.Output.Check(); err != nil {
		errs = append(errs, fmt.Errorf("output: %w", err))
	}
	return errors.Join(errs...)
}

// String is the spec's canonical text, which ParseSynthetic reads back and
// the sweep fingerprint hashes: "count=200 input=DIST output=DIST".
func (s SyntheticSpec) String() string {
	return fmt.Sprintf("count=%d input=%s output=%s", s.Count, s.Input, s.Output)
}

// ParseSynthetic reads a spec in String's form; count may be left out.
func ParseSynthetic(text string) (SyntheticSpec, error) {
	s := SyntheticSpec{Count: DefaultSyntheticCount}
	seen := map[string]bool{}
	for _, f := range strings.Fields(text) {
		k, v, _ := strings.Cut(f, "=")
		if seen[k] {
			return s, fmt.Errorf("synthetic %q: %s given twice", text, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "count":
			s.Count, err = strconv.Atoi(v)
		case "input":
			s.Input, err = ParseDist(v)
		case "output":
			s.Output, err = ParseDist(v)
		default:
			return s, fmt.Errorf("synthetic %q: %q: want count=N input=DIST output=DIST", text, f)
		}
		if err != nil {
			return s, fmt.Errorf("synthetic %s: %w", k, err)
		}
	}
	if !seen["input"] || !seen["output"] {
		return s, fmt.Errorf("synthetic %q: want input=DIST and output=DIST", text)
	}
	return s, s.Check()
}

// Synthesize builds the synthetic set of spec from seed: the same spec and
// seed give the same set. Each prompt is one user message of
// TokensToWords(input) consecutive words of the built-in set's text (its
// messages in order, split on white space), starting at a random word and
// wrapping around, so prompts are real text and rarely share a prefix;
// each asks for a drawn output length as its max_tokens.
func Synthesize(spec SyntheticSpec, seed int64) (*Set, error) {
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("synthetic set: %w", err)
	}
	words, err := builtinWords()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(seed), syntheticStream))
	s := &Set{Name: Synthetic, Prompts: make([]Prompt, spec.Count)}
	var b strings.Builder
	total := 0
	for i := range s.Prompts {
		in := spec.Input.Draw(r)
		if total += in; total > MaxSyntheticTokens {
			return nil, fmt.Errorf("synthetic set: %d prompts of input %s come to more than %d tokens in all; use fewer or shorter prompts",
				spec.Count, spec.Input, MaxSyntheticTokens)
		}
		n := TokensToWords(in)
		at := r.IntN(len(words))
		out := spec.Output.Draw(r)
		b.Reset()
		for j := range n {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(at+j)%len(words)])
		}
		text := b.String()
		s.Prompts[i] = Prompt{Messages: []Message{{Role: "user", Content: text}}, Text: text,
			OutputTokens: out, MaxTokens: out, Target: in}
	}
	s.Hash = hashPrompts(s.Prompts)
	return s, nil
}

// Words is the text that synthetic sets and a trace's blocks are cut from:
// every message of the built-in set, in order, split on white space.
func Words() ([]string, error) { return builtinWords() }

// builtinWords is the synthetic sets' text source: every message of the
// built-in set, in order, split on white space.
func builtinWords() ([]string, error) {
	set, err := Parse(Builtin, builtinJSONL)
	if err != nil {
		return nil, err
	}
	var words []string
	for _, p := range set.Prompts {
		for _, m := range p.Messages {
			words = append(words, strings.Fields(m.Content)...)
		}
	}
	return words, nil
}
