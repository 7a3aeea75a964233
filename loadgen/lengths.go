package loadgen

import (
	"context"
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// maxLengthTrips bounds the tokenize calls spent cutting one text prompt
// to its length: a search over its word count, about log2 of its words.
const maxLengthTrips = 24

// exactLengths makes every prompt that asks for a length in tokens
// (prompts.Prompt.Target) that long in the served model's tokens, through
// the engine's tokenize call, before any request is sent, and returns how
// (measure.LengthsExact, LengthsTokenized, LengthsEstimated; "" when no
// prompt asks for a length). exact[i] is prompt i's length as sent when
// known. A prompt already made of token ids is exact by construction; a
// text prompt becomes token ids where the endpoint takes them (the text's
// ids, repeated if short, cut at the length), else its words are cut,
// searching on the word count with the tokenizer, to the longest text
// within the length: a round trip checks every count.
func (s *sweep) exactLengths(ctx context.Context) (mode string, exact []int, err error) {
	set := s.o.Prompts
	exact = make([]int, len(set.Prompts))
	asked, estimated, short := 0, 0, 0
	idsOK := s.o.Endpoint == EndpointCompletions && s.o.Engine.TokenPrompts
	tok := func(text string) ([]int, error) {
		return s.o.Engine.Tokenize(ctx, s.q.fresh, s.base, s.o.APIKey, s.res.Model, text)
	}
	for i := range set.Prompts {
		p := &set.Prompts[i]
		if p.IDs != nil {
			exact[i] = len(p.IDs)
		}
		if p.Target == 0 {
			continue
		}
		asked++
		if p.IDs != nil {
			continue
		}
		if s.o.Engine.TokenizeCall == nil {
			estimated++
			continue
		}
		if idsOK {
			ids, err := tok(p.Text)
			if err != nil {
				return "", nil, fmt.Errorf("prompt %d: %w", i, err)
			}
			if len(ids) == 0 {
				return "", nil, fmt.Errorf("prompt %d: the tokenizer returned no tokens", i)
			}
			for len(ids) < p.Target {
				ids = append(ids, ids...)
			}
			p.IDs = make([]int32, p.Target)
			for k := range p.IDs {
				p.IDs[k] = int32(ids[k])
			}
			exact[i] = p.Target
			continue
		}
		n, err := cutWords(p, tok)
		if err != nil {
			return "", nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		exact[i] = n
		if n != p.Target {
			short++
		}
	}
	switch {
	case asked == 0:
		return "", exact, nil
	case estimated > 0:
		return measure.LengthsEstimated, exact, nil
	case short > 0:
		return measure.LengthsTokenized, exact, nil
	}
	return measure.LengthsExact, exact, nil
}

// cutWords sets p's text to the most of its words (repeated when too few)
// whose token count is at most p.Target, and returns that count. Token
// counts grow with words, so a binary search finds it; the text is cut
// from its end only, so a trace row's leading blocks stay whole.
func cutWords(p *prompts.Prompt, tok func(string) ([]int, error)) (int, error) {
	words := strings.Fields(p.Text)
	if len(words) == 0 {
		return 0, fmt.Errorf("an empty prompt")
	}
	text := func(k int) string {
		var b strings.Builder
		for j := range k {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[j%len(words)])
		}
		return b.String()
	}
	count := func(k int) (int, error) {
		ids, err := tok(text(k))
		return len(ids), err
	}
	lo, hi := 0, len(words)
	for trips := 0; ; trips++ {
		n, err := count(hi)
		if err != nil {
			return 0, err
		}
		if n > p.Target || trips >= maxLengthTrips {
			break
		}
		lo, hi = hi, 2*hi
	}
	best := 0
	for trips := 0; lo < hi-1 && trips < maxLengthTrips; trips++ {
		mid := (lo + hi) / 2
		n, err := count(mid)
		if err != nil {
			return 0, err
		}
		if n <= p.Target {
			lo, best = mid, n
		} else {
			hi = mid
		}
	}
	if best == 0 {
		n, err := count(max(lo, 1))
		if err != nil {
			return 0, err
		}
		lo, best = max(lo, 1), n
	}
	out := text(lo)
	// Whole words can step over the length (a word of several tokens):
	// the next word's leading characters, one more at a time, fill it.
	next := " " + words[lo%len(words)]
	for k := 1; best < p.Target && k <= len(next); k++ {
		ids, err := tok(out + next[:k])
		if err != nil {
			return 0, err
		}
		if len(ids) > p.Target {
			break
		}
		if len(ids) > best || k == len(next) {
			best = len(ids)
			out, next, k = out+next[:k], next[k:], 0
		}
	}
	p.Text = out
	p.Messages = []prompts.Message{{Role: "user", Content: p.Text}}
	return best, nil
}
