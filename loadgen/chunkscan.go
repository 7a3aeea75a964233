package loadgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A hand-written decoder for stream chunks. encoding/json spends most of
// its time on reflection and validation, and the chunk decoder is the
// client's hot path: at 250 streams a sweep decodes tens of thousands of
// chunks per second next to the server. This decoder reads only the fields
// of chunk, validates everything it skips, and agrees with encoding/json on
// every input (FuzzChunkDecoders checks that).

var (
	errSyntax   = errors.New("invalid JSON")
	errJSONType = errors.New("unexpected JSON type for a chunk field")
)

// scanner walks one JSON document.
type scanner struct {
	b       []byte
	i       int
	scratch []byte // for strings with escapes
	key     []byte // for keys that fold
}

func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the usual case: servers send compact JSON
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// object calls field for each key of the object that is next; field must
// consume the value.
func (s *scanner) object(field func(key []byte) error) error {
	if s.peek() != '{' {
		return errJSONType
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return errSyntax
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		key = s.fold(key)
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		s.ws()
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// array calls elem for each element of the array that is next.
func (s *scanner) array(elem func() error) error {
	if s.peek() != '[' {
		return errJSONType
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// str decodes the string that is next. The result aliases the input or the
// scratch buffer: valid until the next call.
func (s *scanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errJSONType
	}
	s.i++
	start := s.i
	// Fast path, eight bytes at a time while they hold no quote, backslash,
	// control or non-ASCII byte; then byte by byte to the closing quote.
	b := s.b
	i := start
	for i+8 <= len(b) && !specialWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) {
		c := b[i]
		if c == '"' {
			s.i = i + 1
			return b[start:i], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			// Text in other scripts: still the string as it stands when
			// it is valid UTF-8 without escapes up to the closing quote.
			if q := bytes.IndexByte(b[i:], '"'); q >= 0 && plainString(b[start:i+q]) {
				s.i = i + q + 1
				return b[start : i+q], nil
			}
			break
		}
		i++
	}
	s.i = i
	out := append(s.scratch[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			s.scratch = out
			return out, nil
		case c < 0x20:
			return nil, errSyntax
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, errSyntax
			}
			e := s.b[s.i+1]
			s.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return nil, errSyntax
				}
				if utf16.IsSurrogate(r) {
					// A pair decodes to one rune; a lone half is U+FFFD and
					// whatever follows is read on its own, as encoding/json does.
					if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
						save := s.i
						s.i += 2
						r2, ok := s.hex4()
						if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
							out = utf8.AppendRune(out, dec)
							continue
						}
						s.i = save
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, errSyntax
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			s.i++
		default:
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, unicode.ReplacementChar)
			} else {
				out = append(out, s.b[s.i:s.i+size]...)
			}
			s.i += size
		}
	}
	return nil, errSyntax
}

// specialWord reports whether any of the eight bytes of w is a quote, a
// backslash, a control byte or not ASCII: the bytes a string's fast path
// stops at. Each test is the classic "has a zero byte" / "has a byte less
// than n" word test, which is exact in whether any byte matches.
func specialWord(w uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := w ^ ('"' * ones)
	bs := w ^ ('\\' * ones)
	return ((w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs|w)&highs != 0
}

// plainString reports whether seg, the bytes up to a closing quote, holds
// no backslash, no control byte and only valid UTF-8: the JSON string is
// then exactly those bytes. It tests eight bytes at a time.
func plainString(seg []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	b := seg
	ascii := true
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		// A byte below 0x20, or a byte equal to '\\' (zero after the xor):
		// the classic "has less than" word test, exact in whether any byte
		// matches.
		bs := w ^ ('\\' * ones)
		if (w-0x20*ones)&^w&highs != 0 || (bs-ones)&^bs&highs != 0 {
			return false
		}
		ascii = ascii && w&highs == 0
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(seg)
}

func (s *scanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	s.i += 4
	return r, true
}

// number consumes a JSON number and returns its text.
func (s *scanner) number() ([]byte, error) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, errSyntax
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, errSyntax
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, errSyntax
		}
	}
	return s.b[start:s.i], nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// skip consumes any value, validating it.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		_, err := s.str()
		return err
	case c == '-' || ('0' <= c && c <= '9'):
		_, err := s.number()
		return err
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
				s.i += len(lit)
				return nil
			}
		}
		return errSyntax
	}
}

// string reads a string or null field into *dst.
func (s *scanner) string(dst *string) error {
	if s.null() {
		return nil
	}
	v, err := s.str()
	if err != nil {
		return err
	}
	*dst = string(v)
	return nil
}

// int reads an integer or null field into *dst.
func (s *scanner) int(dst *int) error {
	if s.null() {
		return nil
	}
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		if c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' {
			return errJSONType
		}
		return errSyntax
	}
	lit, err := s.number()
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(string(lit))
	if err != nil {
		return errJSONType // a fraction, an exponent or out of range
	}
	*dst = n
	return nil
}

// intPtr reads an integer or null field into *dst as encoding/json fills
// a *int: null sets it to nil.
func (s *scanner) intPtr(dst **int) error {
	if s.null() {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = new(int)
	}
	return s.int(*dst)
}

// fold returns key in the form that matches a field name, so that is can
// compare bytes: encoding/json matches keys to names without regard to case
// (bytes.EqualFold). Every name is lower-case ASCII, so a key that is
// lower-case ASCII already stands as it is; otherwise ASCII letters are
// lowered, and the Kelvin sign and the long s, the only other runes whose
// case folding reaches an ASCII letter, become k and s. Any other rune
// stays, and matches no name. The result may alias the scanner's key
// buffer: valid until the next key.
func (s *scanner) fold(key []byte) []byte {
	i := 0
	for i < len(key) && key[i] < utf8.RuneSelf && !('A' <= key[i] && key[i] <= 'Z') {
		i++
	}
	if i == len(key) {
		return key
	}
	out := append(s.key[:0], key[:i]...)
	for _, r := range string(key[i:]) {
		switch {
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r == '\u212A': // KELVIN SIGN
			r = 'k'
		case r == '\u017F': // LATIN SMALL LETTER LONG S
			r = 's'
		}
		out = utf8.AppendRune(out, r)
	}
	s.key = out
	return out
}

// is matches a key from object, already folded, to a lower-case name.
func is(key []byte, name string) bool { return string(key) == name }

// decodeChunk fills c (which must be zero) from data.
func decodeChunk(data []byte, c *chunk, s *scanner) error {
	s.b, s.i = data, 0
	if s.null() {
		return s.end()
	}
	err := s.object(func(key []byte) error {
		switch {
		case is(key, "choices"):
			c.Choices = c.Choices[:0]
			if s.null() {
				c.Choices = nil
				return nil
			}
			return s.array(func() error {
				c.Choices = append(c.Choices, choice{})
				ch := &c.Choices[len(c.Choices)-1]
				if s.null() {
					return nil
				}
				return s.object(func(key []byte) error {
					switch {
					case is(key, "delta"):
						if s.null() {
							return nil
						}
						return s.object(func(key []byte) error {
							switch {
							case is(key, "content"):
								return s.string(&ch.Delta.Content)
							case is(key, "reasoning_content"):
								return s.string(&ch.Delta.ReasoningContent)
							case is(key, "reasoning"):
								return s.string(&ch.Delta.Reasoning)
							}
							return s.skip()
						})
					case is(key, "text"):
						return s.string(&ch.Text)
					case is(key, "finish_reason"):
						if s.null() {
							ch.FinishReason = nil
							return nil
						}
						var f string
						if err := s.string(&f); err != nil {
							return err
						}
						ch.FinishReason = &f
						return nil
					}
					return s.skip()
				})
			})
		case is(key, "usage"):
			if s.null() {
				c.Usage = nil
				return nil
			}
			if c.Usage == nil {
				c.Usage = &usage{}
			}
			return s.object(func(key []byte) error {
				switch {
				case is(key, "prompt_tokens"):
					return s.int(&c.Usage.PromptTokens)
				case is(key, "completion_tokens"):
					return s.int(&c.Usage.CompletionTokens)
				case is(key, "prompt_tokens_details"):
					if s.null() {
						c.Usage.PromptTokensDetails = nil
						return nil
					}
					if c.Usage.PromptTokensDetails == nil {
						c.Usage.PromptTokensDetails = &promptDetails{}
					}
					return s.object(func(key []byte) error {
						if is(key, "cached_tokens") {
							return s.intPtr(&c.Usage.PromptTokensDetails.CachedTokens)
						}
						return s.skip()
					})
				}
				return s.skip()
			})
		case is(key, "timings"):
			if s.null() {
				c.Timings = nil
				return nil
			}
			if c.Timings == nil {
				c.Timings = &timings{}
			}
			return s.object(func(key []byte) error {
				switch {
				case is(key, "draft_n"):
					return s.intPtr(&c.Timings.DraftN)
				case is(key, "draft_n_accepted"):
					return s.intPtr(&c.Timings.DraftNAccepted)
				}
				return s.skip()
			})
		case is(key, "sglext"):
			return s.decodeSglext(&c.Sglext)
		case is(key, "metrics"):
			return s.decodeMetrics(&c.Metrics)
		case is(key, "error"):
			if s.null() {
				c.Error = nil
				return nil
			}
			if c.Error == nil {
				c.Error = &streamError{}
			}
			return s.object(func(key []byte) error {
				if is(key, "message") {
					return s.string(&c.Error.Message)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
	if err != nil {
		return err
	}
	return s.end()
}

// end checks nothing but space follows the document.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.b) {
		return errSyntax
	}
	return nil
}
