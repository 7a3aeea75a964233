package prompts

import (
	"math/rand/v2"
	"strings"
)

// A hash id's block is the same tokens wherever it appears: in every row
// that names it, in every scenario, in every run, on every machine. Its
// tokens are drawn from a random stream seeded with the hash alone.
const (
	// BlockTokenLow and BlockTokenHigh bound a block's token ids, [low,
	// high): ids every vocabulary of 32,000 tokens or more has (Llama 2's
	// 32,000, Mistral's 32,768, Llama 3's 128,256, Qwen's 151,936, Kimi K2's
	// 163,840), above the few control tokens at the bottom of SentencePiece
	// vocabularies and below the special tokens at the top of the others.
	BlockTokenLow  = 1000
	BlockTokenHigh = 30000
	// blockStream separates the blocks' random stream from the prompt
	// order's and the synthetic sets'.
	blockStream = 0xb10c_5eed
	// Blocks names how blocks are made from hash ids (the stream, the id
	// range, the words); it goes into the sweep fingerprint, so change it
	// whenever they change.
	Blocks = "bakeoff-blocks-v1"
)

// BlockTokens returns the size token ids of hash's block.
func BlockTokens(hash int64, size int) []int32 {
	r := rand.New(rand.NewPCG(uint64(hash), blockStream))
	out := make([]int32, size)
	for i := range out {
		out[i] = int32(BlockTokenLow + r.IntN(BlockTokenHigh-BlockTokenLow))
	}
	return out
}

// BlockWords returns n words of hash's block as text, for an endpoint
// that takes text only: consecutive words of the built-in set's text from a
// start drawn from the hash, so a block is real words and the same hash
// gives the same words. A shorter block of the same hash is a prefix of a
// longer one, so a row's partial last block still shares its start.
func BlockWords(hash int64, n int, words []string) string {
	r := rand.New(rand.NewPCG(uint64(hash), blockStream))
	at := r.IntN(len(words))
	var b strings.Builder
	for j := range n {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(at+j)%len(words)])
	}
	return b.String()
}

// rowHash is the hash of row i's block k: its own hash id, or, for a row
// without hash ids, a block of its own that no hash id names (ids are 0 or
// more).
func (t *Trace) rowHash(i, k int) int64 {
	r := t.Rows[i]
	if len(r.HashIDs) > 0 {
		return r.HashIDs[k]
	}
	return -int64(r.Line)<<20 - int64(k) - 1
}

// RowTokens returns row i's prompt as token ids: its blocks in order, the
// last cut so that the prompt is exactly its input_length.
func (t *Trace) RowTokens(i int) []int32 {
	r := t.Rows[i]
	out := make([]int32, 0, r.Input)
	for k := 0; len(out) < r.Input; k++ {
		out = append(out, BlockTokens(t.rowHash(i, k), min(t.BlockSize, r.Input-len(out)))...)
	}
	return out
}

// RowText returns row i's prompt as text: the plain form's prompt, or its
// blocks as words (BlockWords), TokensToWords of each block's tokens, so
// its length in tokens is an estimate.
func (t *Trace) RowText(i int, words []string) string {
	r := t.Rows[i]
	if r.Prompt != "" {
		return r.Prompt
	}
	parts := []string{}
	for k, left := 0, r.Input; left > 0; k++ {
		n := min(t.BlockSize, left)
		parts = append(parts, BlockWords(t.rowHash(i, k), TokensToWords(n), words))
		left -= n
	}
	return strings.Join(parts, " ")
}

// TraceStats are what validate shows of a trace.
type TraceStats struct {
	Rows         int
	InputTokens  int // all rows' input_length
	OutputTokens int
	// Prefixes counts the distinct block prefixes (a chain of hash ids from
	// a row's first): the nodes of the prefix tree the trace builds.
	Prefixes int
	// HitRate is the share of input tokens an unbounded prefix cache that
	// matches token by token (page size 1) finds cached, replaying the rows
	// in order, one at a time: the rate the trace itself implies. A prompt's
	// last token is never counted, as SGLang always computes it.
	HitRate float64
}

// Stats computes the trace's statistics. The plain form has no hash ids:
// its prefixes and hit rate are 0.
func (t *Trace) Stats() TraceStats {
	s := TraceStats{Rows: len(t.Rows)}
	type node struct {
		parent int
		hash   int64
	}
	seen := map[node]int{} // a prefix → its id
	sent := map[int]int{}  // a prefix id → the most of its last block's tokens sent
	cached := 0
	for i, r := range t.Rows {
		s.InputTokens += r.Input
		s.OutputTokens += r.Output
		if r.Prompt != "" {
			continue
		}
		parent, hit, matching := -1, 0, true
		for k, left := 0, r.Input; left > 0; k++ {
			n := min(t.BlockSize, left)
			key := node{parent, t.rowHash(i, k)}
			id, ok := seen[key]
			if !ok {
				id = len(seen)
				seen[key] = id
			}
			if matching {
				m := min(n, sent[id])
				hit += m
				matching = ok && m == n
			}
			sent[id] = max(sent[id], n)
			parent = id
			left -= n
		}
		cached += min(hit, r.Input-1)
	}
	s.Prefixes = len(seen)
	if s.InputTokens > 0 {
		s.HitRate = float64(cached) / float64(s.InputTokens)
	}
	return s
}
