package prompts

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// A trace is a recorded stream of requests, replayed at its recorded times.
// Two shapes are read, one per line of a JSONL file:
//
//   - the Mooncake timed trace (kvcache-ai/Mooncake FAST25-release/traces,
//     also read by AIPerf and vllm-bench): {"timestamp": ms, "input_length":
//     tokens, "output_length": tokens, "hash_ids": [ints]}, where each hash
//     names a block of BlockSize prompt tokens and two rows that share
//     leading hashes share that prefix;
//   - a plain form: {"timestamp": ms, "prompt": text, "max_tokens": n}.
//
// Timestamps are milliseconds from the trace's start, as Mooncake's are.
const (
	// DefaultBlockSize is the tokens a hash stands for when the campaign
	// names none: Mooncake's block of 512 tokens.
	DefaultBlockSize = 512
	// MaxBlockSize bounds a block: blocks are held in memory per hash.
	MaxBlockSize = 1 << 16
	// MaxTraceTokens bounds a trace's prompt tokens in all, as
	// MaxSyntheticTokens bounds a synthetic set's: every row's prompt is
	// built and held before the replay.
	MaxTraceTokens = 200_000_000
)

// TraceRow is one request of a trace.
type TraceRow struct {
	At time.Duration // after the trace's first timestamp
	// Input and Output are the row's lengths in tokens (Mooncake's
	// input_length and output_length; Output is max_tokens in the plain form,
	// 0 when it gives none).
	Input, Output int
	HashIDs       []int64 // the Mooncake form's blocks, in order
	Prompt        string  // the plain form's text
	Line          int     // in the file, from 1
}

// Trace is a parsed trace.
type Trace struct {
	Name      string // the file as given
	Rows      []TraceRow
	BlockSize int // tokens per hash id
	// Hash is "sha256:<hex>" of the decoded rows and the block size: what a
	// replay sends is a function of these alone (the blocks' tokens are a
	// function of their hash ids), so the sweep fingerprint covers the token
	// content through it.
	Hash string
}

// traceLine is one line as written: either form, checked by ParseTrace.
type traceLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
	Prompt       *string  `json:"prompt"`
	MaxTokens    *int     `json:"max_tokens"`
}

// ParseTrace decodes a JSONL trace; blockSize 0 is DefaultBlockSize. Every
// error names the file and line: bad JSON, an unknown field, a missing or
// negative timestamp, timestamps that go back, negative lengths, hash ids
// that do not cover input_length in blocks, and a file without rows.
func ParseTrace(name string, data []byte, blockSize int) (*Trace, error) {
	if blockSize == 0 {
		blockSize = DefaultBlockSize
	}
	if blockSize < 1 || blockSize > MaxBlockSize {
		return nil, fmt.Errorf("%s: block size %d: want 1 to %d tokens", name, blockSize, MaxBlockSize)
	}
	t := &Trace{Name: name, BlockSize: blockSize}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var first, last float64
	total := 0
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var l traceLine
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		row, err := l.row(blockSize)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(t.Rows) > 0 && (row.Prompt == "") != t.Hashed() {
			return nil, fmt.Errorf("%s:%d: a row of the other form: a trace is all {timestamp, prompt, max_tokens} or all {timestamp, input_length, output_length, hash_ids}", name, n)
		}
		ts := *l.Timestamp
		if len(t.Rows) == 0 {
			first, last = ts, ts
		}
		if ts < last {
			return nil, fmt.Errorf("%s:%d: timestamp %g is before the previous row's %g: a trace is in the order it was sent", name, n, ts, last)
		}
		last = ts
		row.At = time.Duration(math.Round((ts - first) * float64(time.Millisecond)))
		row.Line = n
		if total += row.Input; total > MaxTraceTokens {
			return nil, fmt.Errorf("%s:%d: the trace's prompts come to more than %d tokens in all", name, n, MaxTraceTokens)
		}
		t.Rows = append(t.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s:1: no rows (want one JSON object per line)", name)
	}
	t.Hash = t.hash()
	return t, nil
}

// row checks one line and makes its row (At and Line are the caller's).
func (l traceLine) row(blockSize int) (TraceRow, error) {
	switch {
	case l.Timestamp == nil:
		return TraceRow{}, errors.New("timestamp missing (milliseconds from the trace's start)")
	case *l.Timestamp < 0 || math.IsInf(*l.Timestamp, 0):
		return TraceRow{}, fmt.Errorf("timestamp %g: want 0 or more milliseconds", *l.Timestamp)
	}
	if l.Prompt != nil {
		if l.InputLength != nil || l.OutputLength != nil || l.HashIDs != nil {
			return TraceRow{}, errors.New("prompt with input_length, output_length or hash_ids: want {timestamp, prompt, max_tokens} or {timestamp, input_length, output_length, hash_ids}")
		}
		if *l.Prompt == "" {
			return TraceRow{}, errors.New("empty prompt")
		}
		r := TraceRow{Prompt: *l.Prompt}
		if l.MaxTokens != nil {
			if *l.MaxTokens < 1 {
				return TraceRow{}, fmt.Errorf("max_tokens %d: want at least 1", *l.MaxTokens)
			}
			r.Output = *l.MaxTokens
		}
		return r, nil
	}
	switch {
	case l.MaxTokens != nil:
		return TraceRow{}, errors.New("max_tokens without prompt: the Mooncake form gives output_length")
	case l.InputLength == nil || l.OutputLength == nil:
		return TraceRow{}, errors.New("want {timestamp, input_length, output_length, hash_ids} or {timestamp, prompt, max_tokens}")
	case *l.InputLength < 1:
		return TraceRow{}, fmt.Errorf("input_length %d: want at least 1 token", *l.InputLength)
	case *l.OutputLength < 0:
		return TraceRow{}, fmt.Errorf("output_length %d: want 0 or more tokens", *l.OutputLength)
	}
	r := TraceRow{Input: *l.InputLength, Output: *l.OutputLength, HashIDs: l.HashIDs}
	if len(r.HashIDs) > 0 {
		// Mooncake's rows have ⌈input_length / block⌉ hashes, the last block
		// partial; any other count means another block size.
		if want := (r.Input + blockSize - 1) / blockSize; len(r.HashIDs) != want {
			return TraceRow{}, fmt.Errorf("input_length %d is %d blocks of %d tokens, but hash_ids has %d (is the block size %d?)",
				r.Input, want, blockSize, len(r.HashIDs), blockSize)
		}
	}
	for _, h := range r.HashIDs {
		if h < 0 {
			return TraceRow{}, fmt.Errorf("hash id %d: want 0 or more", h)
		}
	}
	return r, nil
}

// hash covers the decoded rows and the block size: formatting and
// comments do not change it.
func (t *Trace) hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "trace-v1 block=%d\n", t.BlockSize)
	for _, r := range t.Rows {
		fmt.Fprintf(h, "%d %d %d %d:%s", r.At, r.Input, r.Output, len(r.Prompt), r.Prompt)
		for _, id := range r.HashIDs {
			fmt.Fprintf(h, " %d", id)
		}
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Duration is the trace's span at its recorded pace: its last row's time.
func (t *Trace) Duration() time.Duration { return t.Rows[len(t.Rows)-1].At }

// At returns when each row is due at speed times the recorded pace, after
// the replay's start.
func (t *Trace) At(speed float64) []time.Duration {
	out := make([]time.Duration, len(t.Rows))
	for i, r := range t.Rows {
		out[i] = time.Duration(math.Round(float64(r.At) / speed))
	}
	return out
}

// Hashed reports whether the trace is in the Mooncake form (its prompts are
// built from hash ids) rather than the plain one.
func (t *Trace) Hashed() bool { return t.Rows[0].Prompt == "" }

// ReadTrace reads and parses the trace file at path.
func ReadTrace(path string, blockSize int) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	return ParseTrace(path, data, blockSize)
}
