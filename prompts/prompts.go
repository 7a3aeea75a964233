// Package prompts is the prompt set a sweep draws from: the built-in set
// embedded in the binary, a user's JSONL file, or a synthetic set with given
// input and output length distributions. The set's content hash goes into
// every record and into the sweep fingerprint, so two runs can only be
// compared when they sent the same text with the same per-request lengths.
package prompts

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Builtin is the name of the embedded set in configs and flags.
const Builtin = "builtin"

//go:embed builtin.jsonl
var builtinJSONL []byte

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is one request's input: Messages for the chat endpoint; Text (the
// messages flattened) for the completions endpoint.
type Prompt struct {
	Messages []Message
	Text     string
	// Category labels the prompt (e.g. chat, code, summarize) so figures can
	// be reported per category; empty when the set gives none.
	Category string
	// OutputTokens is the output length recorded with the prompt, in tokens:
	// the line's output_tokens, else the words of a ShareGPT conversation's
	// answer × TokensPerWord; 0 when nothing was recorded. It changes nothing
	// sent unless the set is made with recorded output lengths.
	OutputTokens int
	// MaxTokens is the max_tokens this prompt's requests ask for; 0 means the
	// sweep's max_tokens. Set by WithRecordedLengths and Synthesize.
	MaxTokens int
	// Target is the prompt's length in tokens the set asks for (a synthetic
	// input length, a trace row's input_length); 0: none. Text made for it
	// holds TokensToWords(Target) words, an estimate until a tokenizer cuts
	// it (package loadgen, with the engine's tokenize call).
	Target int
	// IDs, when set, is the prompt as token ids, sent as they are where the
	// endpoint takes them (a trace's blocks; a text cut by a tokenizer).
	IDs []int32
}

// Set is a loaded prompt set.
type Set struct {
	Name    string // "builtin" or the file path as given
	Prompts []Prompt
	Hash    string // "sha256:<hex>" of the canonical content
}

// Load returns the set named by spec: "builtin" (or empty) for the embedded
// set, otherwise a JSONL file, resolved against baseDir when relative.
func Load(spec, baseDir string) (*Set, error) {
	if spec == "" || spec == Builtin {
		return Parse(Builtin, builtinJSONL)
	}
	path := spec
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading prompts: %w", err)
	}
	return Parse(path, data)
}

// line is the accepted JSONL shapes: {"prompt": "..."}, {"messages": [...]},
// or ShareGPT-style {"conversations": [{"from": "human", "value": "..."}]},
// each with an optional "category" and "output_tokens".
type line struct {
	Category     *string `json:"category"`
	OutputTokens *int    `json:"output_tokens"`
	// ID is ShareGPT's conversation id: accepted and ignored, so a
	// ShareGPT dump loads as it is.
	ID            json.RawMessage `json:"id"`
	Prompt        *string         `json:"prompt"`
	Messages      []Message       `json:"messages"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// Parse decodes a JSONL prompt set; errors name the file and line.
func Parse(name string, data []byte) (*Set, error) {
	s := &Set{Name: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		p, err := l.prompt()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		s.Prompts = append(s.Prompts, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(s.Prompts) == 0 {
		return nil, fmt.Errorf("%s: no prompts", name)
	}
	s.Hash = hashPrompts(s.Prompts)
	return s, nil
}

func (l line) prompt() (Prompt, error) {
	var msgs []Message
	var answer string // the recorded reply to the last user turn, if any
	switch {
	case l.Prompt != nil:
		msgs = []Message{{Role: "user", Content: *l.Prompt}}
	case len(l.Messages) > 0:
		msgs = l.Messages
	case len(l.Conversations) > 0:
		for _, c := range l.Conversations {
			role := map[string]string{"human": "user", "user": "user", "gpt": "assistant",
				"assistant": "assistant", "system": "system"}[c.From]
			if role == "" {
				return Prompt{}, fmt.Errorf("unknown conversation role %q", c.From)
			}
			msgs = append(msgs, Message{Role: role, Content: c.Value})
		}
		// A ShareGPT conversation is a whole dialogue; the request is
		// everything up to the last user turn, so the model answers it.
		// The first dropped turn, when the model spoke it, is the answer
		// the recorded output length is measured on.
		for len(msgs) > 0 && msgs[len(msgs)-1].Role != "user" {
			if msgs[len(msgs)-1].Role == "assistant" {
				answer = msgs[len(msgs)-1].Content
			}
			msgs = msgs[:len(msgs)-1]
		}
	default:
		return Prompt{}, errors.New(`want "prompt", "messages" or "conversations"`)
	}
	if len(msgs) == 0 || strings.TrimSpace(msgs[len(msgs)-1].Content) == "" {
		return Prompt{}, errors.New("empty prompt")
	}
	var text strings.Builder
	for i, m := range msgs {
		if i > 0 {
			text.WriteString("\n\n")
		}
		text.WriteString(m.Content)
	}
	p := Prompt{Messages: msgs, Text: text.String(), OutputTokens: WordsToTokens(len(strings.Fields(answer)))}
	if l.OutputTokens != nil {
		if *l.OutputTokens < 1 {
			return Prompt{}, fmt.Errorf("output_tokens %d: want at least 1", *l.OutputTokens)
		}
		p.OutputTokens = *l.OutputTokens
	}
	if l.Category != nil {
		if err := checkCategory(*l.Category); err != nil {
			return Prompt{}, err
		}
		p.Category = *l.Category
	}
	return p, nil
}

// MaxCategoryLen bounds a category's length in bytes: it is a label in
// tables, not text.
const MaxCategoryLen = 40

func checkCategory(c string) error {
	switch {
	case c == "" || strings.TrimSpace(c) != c:
		return fmt.Errorf("category %q: want a non-empty label without leading or trailing space", c)
	case len(c) > MaxCategoryLen:
		return fmt.Errorf("category %q: longer than %d bytes", c, MaxCategoryLen)
	case strings.IndexFunc(c, unicode.IsControl) >= 0:
		return fmt.Errorf("category %q: contains a control character", c)
	}
	return nil
}

// hashPrompts hashes the decoded content, not the file bytes, so formatting
// changes (whitespace, key order, comments) do not change the fingerprint.
// A prompt's category and its own max_tokens are hashed when it has them
// (after a letter no message entry starts with); a recorded output length
// that is not used as max_tokens sends nothing different and is left out.
func hashPrompts(ps []Prompt) string {
	h := sha256.New()
	for _, p := range ps {
		for _, m := range p.Messages {
			fmt.Fprintf(h, "%d:%s%d:%s", len(m.Role), m.Role, len(m.Content), m.Content)
		}
		if p.Category != "" {
			fmt.Fprintf(h, "c%d:%s", len(p.Category), p.Category)
		}
		if p.MaxTokens > 0 {
			fmt.Fprintf(h, "m%d:", p.MaxTokens)
		}
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
