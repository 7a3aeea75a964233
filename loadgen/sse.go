package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Limits of the SSE reader.
const (
	// sseBufferSize is the read buffer per stream in bytes; a typical chunk
	// is a few hundred bytes, so one buffer holds many.
	sseBufferSize = 16 << 10
	// MaxEventBytes bounds one SSE event's data; a larger event is malformed
	// rather than a reason to grow memory without limit.
	MaxEventBytes = 4 << 20
)

// Errors of the SSE reader. A truncated line means the connection ended in
// the middle of a line: the stream was cut, not closed.
var (
	errTruncated   = errors.New("stream ended in the middle of a line")
	errEventTooBig = fmt.Errorf("SSE event larger than %d bytes", MaxEventBytes)
)

// sseReader reads the data payloads of Server-Sent Events from a stream.
// Only the data field matters for OpenAI-compatible streams; comments
// (keep-alives), event, id and retry fields are skipped.
type sseReader struct {
	r    *bufio.Reader
	data []byte // the event being assembled
	long []byte // a line longer than the read buffer, assembled
	has  bool   // the event has at least one data line
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, sseBufferSize)}
}

// next returns the data of the next event. The slice is valid until the next
// call. It returns io.EOF when the stream ends cleanly between events (a
// final event whose blank line never came is still returned first),
// errTruncated when it ends inside a line, errEventTooBig, or the
// underlying read error.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	s.has = false
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && s.has {
				// Lenient: a server that closes right after its last data line
				// without the blank line still delivered that event.
				return s.data, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if s.has {
				return s.data, nil
			}
			continue // a blank line after comments only: no event
		}
		if line[0] == ':' {
			continue // comment, e.g. a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(field) != "data" {
			continue
		}
		if s.has {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > MaxEventBytes {
			return nil, errEventTooBig
		}
		s.data = append(s.data, value...)
		s.has = true
	}
}

// line returns the next line without its terminator (\n or \r\n).
func (s *sseReader) line() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if err == nil {
		return trimEOL(b), nil
	}
	if err != bufio.ErrBufferFull {
		if len(b) > 0 && err == io.EOF {
			return nil, errTruncated
		}
		return nil, err
	}
	// A line longer than the buffer: assemble it.
	s.long = append(s.long[:0], b...)
	for {
		b, err = s.r.ReadSlice('\n')
		if len(s.long)+len(b) > MaxEventBytes {
			return nil, errEventTooBig
		}
		s.long = append(s.long, b...)
		switch {
		case err == nil:
			return trimEOL(s.long), nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			return nil, errTruncated
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
