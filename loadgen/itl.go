package loadgen

import "github.com/bakeoff-dev/bakeoff/measure"

// chunkGap is the time before one content chunk since the one before it,
// and the tokens it carried when the server said (0 when it did not).
type chunkGap struct {
	ns     int64
	tokens int
}

// gaps turns a stream's chunk gaps into the record's inter-token gaps the
// way maxITL and maxGap make max_itl_ns: each gap over its own tokens where
// the server reports usage on every chunk (a chunk it gave no count for is
// left out, as from the maximum), else over the stream's mean tokens per
// chunk. Rounded to measure.ITLUnit.
func gaps(cs []chunkGap, perChunk bool, tokens, chunks int) measure.Gaps {
	unit := int64(measure.ITLUnit)
	out := make(measure.Gaps, 0, len(cs))
	for _, c := range cs {
		ns := c.ns
		switch {
		case perChunk && c.tokens == 0:
			continue
		case perChunk:
			ns /= int64(c.tokens)
		case tokens > chunks && chunks > 0:
			ns = ns * int64(chunks) / int64(tokens)
		}
		out = append(out, (ns+unit/2)/unit)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
