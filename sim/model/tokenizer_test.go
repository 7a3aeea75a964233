package model

import (
	"slices"
	"strings"
	"testing"
)

// TestTokenizeCounts: the ids of a text are as many as CountTokens counts,
// so a prompt's ids and its prompt_tokens agree.
func TestTokenizeCounts(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "abcd", "abcde", "Explain hash maps.", "héllo wörld, ünïcode",
		strings.Repeat("x", 4097)} {
		ids := TokenizeText(s)
		if len(ids) != CountTokens(s) {
			t.Errorf("%q: %d ids, CountTokens %d", s, len(ids), CountTokens(s))
		}
		for _, id := range ids {
			if id < 0 || id >= VocabSize {
				t.Errorf("%q: id %d outside the vocabulary", s, id)
			}
		}
		if !slices.Equal(ids, TokenizeText(s)) {
			t.Errorf("%q: two tokenizations differ", s)
		}
		if got, want := len(MessageIDs("user", s)), CountTokens(s)+ChatTemplateTokens; got != want {
			t.Errorf("%q as a message: %d ids, want %d", s, got, want)
		}
	}
}

// TestTokenizePrefixes: texts share leading ids where they share leading
// runs of bytes, and nowhere else; chat messages share none through their
// template alone.
func TestTokenizePrefixes(t *testing.T) {
	common := func(a, b []int32) int {
		n := 0
		for n < min(len(a), len(b)) && a[n] == b[n] {
			n++
		}
		return n
	}
	tests := []struct {
		a, b []int32
		want int
	}{
		{TokenizeText("The quick brown fox"), TokenizeText("The quick brown cat"), 4},
		{TokenizeText("abcdefgh"), TokenizeText("abcdefgh and more"), 2},
		{TokenizeText("zzzz"), TokenizeText("yyyy"), 0},
		{MessageIDs("user", "Why?"), MessageIDs("user", "How?"), 0},
		{MessageIDs("user", "Same."), MessageIDs("assistant", "Same."), 2},
	}
	for i, tt := range tests {
		if got := common(tt.a, tt.b); got != tt.want {
			t.Errorf("case %d: %d common leading ids, want %d", i, got, tt.want)
		}
	}
}

// TestOutputIDs: what the cache keeps of a finished request is what the
// next turn sends: a chat turn's history with the answer, a completion's
// prompt with its continuation.
func TestOutputIDs(t *testing.T) {
	turn1 := MessageIDs("user", "Hi there.")
	next := append(append(slices.Clone(turn1), MessageIDs("assistant", " the answer")...), MessageIDs("user", "More.")...)
	if kept := OutputIDs(true, turn1, "", " the answer"); !slices.Equal(kept, next[:len(kept)]) {
		t.Error("a chat turn's cached ids are not the next turn's prefix")
	}
	kept := OutputIDs(false, TokenizeText("Once upon"), "Once upon", " a time")
	if want := TokenizeText("Once upon a time, there"); !slices.Equal(kept[:len(kept)-1], want[:len(kept)-1]) {
		t.Error("a completion's cached ids are not its continuation's prefix")
	}
}
