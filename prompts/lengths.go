package prompts

import "math"

// TokensPerWord converts between words (runs of non-space characters) and
// tokens without a tokenizer: OpenAI's rule of thumb for English, "100
// tokens ≈ 75 words" (help.openai.com, "What are tokens and how to count
// them"). A real tokenizer differs by model and by text (code and numbers
// take more tokens per word), so lengths made with it are approximate; the
// server's usage in each record says what was actually sent and generated.
const TokensPerWord = 4.0 / 3.0

// WordsToTokens is the token estimate of a text of n words, rounded; 0 for
// no words.
func WordsToTokens(n int) int {
	if n <= 0 {
		return 0
	}
	return max(1, int(math.Round(float64(n)*TokensPerWord)))
}

// TokensToWords is how many words make about n tokens, rounded, at least 1.
func TokensToWords(n int) int {
	return max(1, int(math.Round(float64(n)/TokensPerWord)))
}

// Output-length modes: how a set made from a file sets each request's
// max_tokens.
const (
	// OutputMaxTokens sends the sweep's max_tokens with every request.
	OutputMaxTokens = "max_tokens"
	// OutputRecorded sends each prompt's recorded output length
	// (Prompt.OutputTokens) as its max_tokens; prompts without one get the
	// sweep's max_tokens.
	OutputRecorded = "recorded"
)

// WithRecordedLengths returns a copy of the set in which every prompt with a
// recorded output length asks for it as max_tokens, with the hash that
// says so.
func (s *Set) WithRecordedLengths() *Set {
	out := &Set{Name: s.Name, Prompts: make([]Prompt, len(s.Prompts))}
	for i, p := range s.Prompts {
		p.MaxTokens = p.OutputTokens
		out.Prompts[i] = p
	}
	out.Hash = hashPrompts(out.Prompts)
	return out
}

// Unrecorded counts the prompts that have no recorded output length.
func (s *Set) Unrecorded() int {
	n := 0
	for _, p := range s.Prompts {
		if p.OutputTokens == 0 {
			n++
		}
	}
	return n
}

// Categories returns the set's categories in order of first appearance;
// nil when no prompt has one.
func (s *Set) Categories() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range s.Prompts {
		if p.Category != "" && !seen[p.Category] {
			seen[p.Category] = true
			out = append(out, p.Category)
		}
	}
	return out
}

// MeanMaxTokens is the mean max_tokens the set's prompts ask for, a prompt
// without its own counting as fallback (the sweep's max_tokens).
func (s *Set) MeanMaxTokens(fallback int) float64 {
	if len(s.Prompts) == 0 {
		return float64(fallback)
	}
	sum := 0
	for _, p := range s.Prompts {
		if p.MaxTokens > 0 {
			sum += p.MaxTokens
		} else {
			sum += fallback
		}
	}
	return float64(sum) / float64(len(s.Prompts))
}
