package orchestrator

import (
	"bytes"
	"strings"
)

// lineScanner splits a growing log into whole lines, keeping a partial last
// line until the rest of it arrives.
type lineScanner struct {
	partial []byte
}

// feed adds data and returns the whole lines it completes.
func (l *lineScanner) feed(data []byte) []string {
	l.partial = append(l.partial, data...)
	var out []string
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		out = append(out, strings.TrimRight(string(l.partial[:i]), "\r"))
		l.partial = l.partial[i+1:]
	}
	// A line longer than this is not waited on forever.
	if len(l.partial) > 1<<20 {
		out = append(out, string(l.partial))
		l.partial = nil
	}
	return out
}
