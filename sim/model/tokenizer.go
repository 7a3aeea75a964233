package model

import "hash/fnv"

// The sim's tokenizer: the approximation that counts prompt tokens (a token
// every BytesPerToken bytes, CountTokens) made into token ids, so that a
// prompt can be tokenized (/v1/tokenize), sent as ids (/v1/completions), and
// matched in the prefix cache token by token. A token is a run of
// BytesPerToken bytes of the text (the last may be shorter) and its id is a
// hash of those bytes into the vocabulary: the same text gives the same ids
// everywhere, and two texts share leading ids exactly where they share
// leading runs of bytes. Ids cannot be decoded back to text.
const (
	// VocabSize is the number of token ids, Kimi-K2's vocabulary size; a
	// prompt of ids at or above it is refused, as SGLang refuses ids its
	// model has no embedding for.
	VocabSize = 163840
	// specialTokens are the ids at the top of the vocabulary kept for the
	// chat template and the empty text; text never hashes to them.
	specialTokens = 256
	textTokens    = VocabSize - specialTokens

	// emptyTextID is the one token of an empty text (CountTokens counts an
	// empty prompt as one token).
	emptyTextID = textTokens
	// templateBase is the first id of the chat template's tokens.
	templateBase = textTokens + 1
)

// tokenID is the id of one run of bytes of text.
func tokenID(b string) int32 {
	h := fnv.New32a()
	h.Write([]byte(b))
	return int32(h.Sum32() % textTokens)
}

// TokenizeText returns the ids of s: one per BytesPerToken bytes, so that
// len(TokenizeText(s)) == CountTokens(s).
func TokenizeText(s string) []int32 {
	if s == "" {
		return []int32{emptyTextID}
	}
	ids := make([]int32, 0, (len(s)+BytesPerToken-1)/BytesPerToken)
	for i := 0; i < len(s); i += BytesPerToken {
		ids = append(ids, tokenID(s[i:min(i+BytesPerToken, len(s))]))
	}
	return ids
}

// chatRoles are the roles whose template tokens have ids of their own;
// any other role shares the last.
var chatRoles = []string{"system", "user", "assistant", "tool", "developer"}

// MessageIDs is one chat message as the sim's template tokenizes it: the
// content's ids, then ChatTemplateTokens ids that end the message and name
// its role. The template's tokens come after the content, not before it, so
// that two conversations share a cached prefix only where their messages do
// (a real template's shared header would give every request a hit of a few
// tokens, which the campaigns this sim stands in for do not need to see).
func MessageIDs(role, content string) []int32 {
	r := len(chatRoles)
	for i, name := range chatRoles {
		if name == role {
			r = i
			break
		}
	}
	ids := TokenizeText(content)
	for k := range ChatTemplateTokens {
		ids = append(ids, templateBase+int32(r*ChatTemplateTokens+k))
	}
	return ids
}

// OutputIDs is what the cache keeps for a completion's output: the text as
// the next turn sends it back (a chat turn's answer as an assistant
// message; a completion's as more prompt text, tokenized with the prompt so
// that the runs of bytes line up).
func OutputIDs(chat bool, prompt []int32, promptText, output string) []int32 {
	if chat {
		return append(append([]int32(nil), prompt...), MessageIDs("assistant", output)...)
	}
	if promptText == "" { // a prompt of ids: the output's own runs follow it
		return append(append([]int32(nil), prompt...), TokenizeText(output)...)
	}
	return TokenizeText(promptText + output)
}
