package model

import (
	"hash/fnv"
	"strings"
)

// Text generation: every output token is a word chosen by hashing the prompt,
// the request's sampling seed and the token's position, so a greedy request
// gets the same text from every variant, however its tokens are chunked.
const (
	// BytesPerToken approximates the tokenizer for prompt token counts.
	BytesPerToken = 4
	// ChatTemplateTokens is the chat template's overhead per message.
	ChatTemplateTokens = 4
	// minNaturalLength and naturalLengthSpan bound the length at which a
	// request without ignore_eos reaches its end of sequence.
	minNaturalLength  = 24
	naturalLengthSpan = 360
	// wrongOutputFrom is the first token position that the wrong-output
	// fault changes; the first tokens agree, as a subtly broken verifier's would.
	wrongOutputFrom = 8
	wrongOutputSalt = 0x9e3779b97f4a7c15
)

var vocabulary = strings.Fields(`the a of to and in is that for it as with on be by this are from or at
an which can model token each when not we one more than value data time two first if its also but
their has use used into step cache memory batch request server speed load queue state so then over
only other new most how very between both because after where while under same every these those
result number small large fast slow write read key map hash table list node tree graph path function
return loop index order count sum mean rate level test case check error line file system process
thread core host port block layer head weight scale bound limit start end train route answer first
second third next last point part side form way kind set run call work show give take make keep`)

// TextKey identifies one request's output: its prompt and sampling seed.
type TextKey uint64

func NewTextKey(prompt string, seed int64) TextKey {
	h := fnv.New64a()
	h.Write([]byte(prompt))
	var b [8]byte
	for i := range b {
		b[i] = byte(uint64(seed) >> (8 * i))
	}
	h.Write(b[:])
	return TextKey(h.Sum64())
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Token returns the text of output token i (a leading space and a word).
func (k TextKey) Token(i int, wrong bool) string {
	x := uint64(k) ^ uint64(i)*0xd1b54a32d192ed03
	if wrong && i >= wrongOutputFrom {
		x ^= wrongOutputSalt
	}
	return " " + vocabulary[splitmix(x)%uint64(len(vocabulary))]
}

// Tokens returns output tokens [from, to) concatenated.
func (k TextKey) Tokens(from, to int, wrong bool) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(k.Token(i, wrong))
	}
	return b.String()
}

// NaturalLength is where the request's text reaches end of sequence.
func (k TextKey) NaturalLength() int {
	return minNaturalLength + int(splitmix(uint64(k)^0x10ad)%naturalLengthSpan)
}

// CountTokens approximates the tokenizer: about four bytes a token.
func CountTokens(s string) int { return max(1, (len(s)+BytesPerToken-1)/BytesPerToken) }
