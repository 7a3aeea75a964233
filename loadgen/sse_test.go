package loadgen

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// readAll returns every event's data and the error that ended the stream.
func readAll(r io.Reader) ([]string, error) {
	s := newSSEReader(r)
	var out []string
	for {
		d, err := s.next()
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		err  error
	}{
		{"two events", "data: a\n\ndata: b\n\n", []string{"a", "b"}, io.EOF},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, io.EOF},
		{"no space after colon", "data:a\n\n", []string{"a"}, io.EOF},
		{"only one space stripped", "data:  a\n\n", []string{" a"}, io.EOF},
		{"multi-line data joined by newline", "data: a\ndata: b\n\n", []string{"a\nb"}, io.EOF},
		{"comments and other fields skipped", ": ping\n\nevent: x\nid: 3\nretry: 10\ndata: a\n\n:\n\n", []string{"a"}, io.EOF},
		{"field without colon", "data\n\n", []string{""}, io.EOF},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\n", []string{"a"}, io.EOF},
		{"last event without blank line", "data: a\n\ndata: [DONE]\n", []string{"a", "[DONE]"}, io.EOF},
		{"cut inside a line", "data: a\n\ndata: {\"x", []string{"a"}, errTruncated},
		{"empty", "", nil, io.EOF},
		{"line longer than the buffer", "data: " + strings.Repeat("y", 3*sseBufferSize) + "\n\n",
			[]string{strings.Repeat("y", 3*sseBufferSize)}, io.EOF},
		{"too big", "data: " + strings.Repeat("y", MaxEventBytes) + "\n\n", nil, errEventTooBig},
		{"too big over many lines", strings.Repeat("data: "+strings.Repeat("z", 1<<20)+"\n", 5), nil, errEventTooBig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(r)
				if !errors.Is(err, tt.err) {
					t.Fatalf("error %v, want %v", err, tt.err)
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
					t.Errorf("events %q, want %q", trunc(got), trunc(tt.want))
				}
			}
		})
	}
}

func trunc(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		out[i] = x
	}
	return out
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Errorf("events %q error %v, want one event and the read error", got, err)
	}
}

// FuzzSSEReader feeds arbitrary bytes to the SSE reader: it must never
// panic, never return more data than it read, and give the same events
// however the bytes are split into reads.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: {\"choices\":[]}\r\n\r\ndata: [DONE]\r\n\r\n", ": ping\n\n", "data:\n\n",
		"event: x\ndata: a\ndata: b\n\n", "data: a", "\r\n\n\r", "data: " + strings.Repeat("x", 100),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := readAll(bytes.NewReader(in))
		b, errB := readAll(iotest.HalfReader(bytes.NewReader(in)))
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") || len(a) != len(b) || !errors.Is(errB, errA) {
			t.Fatalf("split reads differ: %q %v vs %q %v", a, errA, b, errB)
		}
		total := 0
		for _, e := range a {
			total += len(e)
		}
		if total > len(in) {
			t.Fatalf("%d bytes of events from %d bytes of input", total, len(in))
		}
	})
}

// FuzzChunk feeds arbitrary event data through the chunk decoder and the
// stream state: malformed input must be an error, never a panic.
func FuzzChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"hi"},"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}`,
		`{"choices":[{"text":"x","finish_reason":"length"}],"usage":{"completion_tokens":1}}`,
		`{"error":{"message":"boom"}}`, `[DONE]`, `{"choices":null}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c chunk
		if parseChunk(data, &c) != nil {
			return
		}
		st := streamState{hash: sha256New()}
		var rec measure.Record
		st.add(&c, 1, &rec)
		st.add(&c, 2, &rec)
		st.finish(&rec, 10)
		if rec.Chunks < 0 || rec.MaxITLNs < 0 {
			t.Fatalf("record %+v", rec)
		}
	})
}
