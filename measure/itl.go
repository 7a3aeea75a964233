package measure

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ITLUnit is the unit of the gaps a record keeps: a microsecond is a
// thousandth of the shortest inter-token gap a real server streams at, and
// keeps the encoded numbers short.
const ITLUnit = time.Microsecond

// Gaps are one request's inter-token gaps in stream order, in ITLUnit: for
// each content chunk after the first, the time since the chunk before it
// divided by the tokens it carried (exactly, when the server reports usage
// on every chunk; else by the stream's mean tokens per chunk), the values
// whose largest is Record.MaxITLNs.
//
// In JSON they are one string: the differences between consecutive gaps
// (the first from 0), each zigzag-varint encoded, in unpadded URL-safe
// base64. A steady stream's gaps differ by little, so most take one byte;
// docs/RESULTS.md gives what this costs a campaign's records, against a JSON
// array of the same numbers.
type Gaps []int64

// MarshalJSON writes the gaps as their encoded string.
func (g Gaps) MarshalJSON() ([]byte, error) { return json.Marshal(EncodeGaps(g)) }

// UnmarshalJSON reads an encoded string; null leaves no gaps.
func (g *Gaps) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("itl: want an encoded string: %w", err)
	}
	if s == nil {
		*g = nil
		return nil
	}
	d, err := DecodeGaps(*s)
	if err != nil {
		return fmt.Errorf("itl: %w", err)
	}
	*g = d
	return nil
}

// EncodeGaps is the JSON string of g (see Gaps).
func EncodeGaps(g []int64) string {
	buf := make([]byte, 0, len(g)+len(g)/2)
	var prev int64
	for _, x := range g {
		// The difference wraps in two's complement like the sum that
		// undoes it, so every int64 comes back exactly.
		buf = binary.AppendVarint(buf, x-prev)
		prev = x
	}
	return base64.RawURLEncoding.EncodeToString(buf)
}

// errGaps is a string that EncodeGaps cannot have written.
var errGaps = errors.New("not an encoded list of gaps")

// DecodeGaps reads what EncodeGaps wrote; anything else is an error (a
// truncated or overlong number, a character outside the alphabet), so a
// damaged record is found rather than read as other gaps.
func DecodeGaps(s string) ([]int64, error) {
	buf, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGaps, err)
	}
	// The decoder skips line breaks: only the string it would write reads.
	if base64.RawURLEncoding.EncodeToString(buf) != s {
		return nil, fmt.Errorf("%w: characters outside the alphabet", errGaps)
	}
	var out []int64
	var prev int64
	for at := 0; at < len(buf); {
		d, n := binary.Varint(buf[at:])
		// A number longer than it must be decodes, but EncodeGaps never
		// writes one: refuse it too, so a string has one meaning.
		if n <= 0 || n != len(binary.AppendVarint(nil, d)) {
			return nil, fmt.Errorf("%w: bad number at byte %d", errGaps, at)
		}
		at += n
		prev += d
		out = append(out, prev)
	}
	return out, nil
}

// Seconds are the gaps in seconds.
func (g Gaps) Seconds() []float64 {
	out := make([]float64, len(g))
	for i, x := range g {
		out[i] = float64(x) * ITLUnit.Seconds()
	}
	return out
}
