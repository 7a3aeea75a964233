package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// doc decodes one YAML file at the node level, so every error carries the
// line and column of the key or value it is about.
type doc struct {
	file string
	p    *problems
	data []byte // the file's bytes, to place errors the YAML library reports without a line
}

// parse reads a file's single YAML document into its root node. Syntax
// errors are recorded and yield nil.
func (d *doc) parse(data []byte) *yaml.Node {
	d.p.seeFile(d.file)
	d.data = data
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := decodeNode(dec, &root); err != nil {
		if errors.Is(err, io.EOF) {
			d.p.errorf(position{file: d.file}, "empty file")
			return nil
		}
		d.syntaxError(err)
		return nil
	}
	var extra yaml.Node
	if err := decodeNode(dec, &extra); err == nil {
		d.p.errorf(d.pos(&extra), "a second YAML document: a file holds exactly one")
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.syntaxError(err)
		return nil
	}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			d.p.errorf(position{file: d.file}, "empty file")
			return nil
		}
		n = n.Content[0]
	}
	return n
}

// decodeNode guards against a panic inside the YAML library: a malformed
// file must become an error, never a crash.
func decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: unreadable document (%v)", r)
		}
	}()
	return dec.Decode(n)
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the YAML library's parser (not scanner) messages. For
// these it reports a 0-based line (where the enclosing construct began), for
// scanner messages a 1-based one; the difference is undone here.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

func (d *doc) syntaxError(err error) {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if parserProblems[m[2]] {
			line++
		}
		d.p.errorf(position{d.file, line, 0}, "YAML syntax: %s", m[2])
		return
	}
	if at, b, ok := controlChar(d.data); ok && strings.Contains(msg, "control characters") {
		at.file = d.file
		d.p.errorf(at, "YAML syntax: control character %U is not allowed (write it as an escape in a double-quoted string)", b)
		return
	}
	d.p.errorf(position{file: d.file}, "YAML syntax: %s", strings.TrimPrefix(msg, "yaml: "))
}

// controlChar finds the first character YAML forbids in a stream (controls
// other than tab, LF, CR and NEL, DEL, surrogates, U+FFFE/U+FFFF) and
// returns its 1-based line and column in characters. The YAML library
// reports these without a position.
func controlChar(data []byte) (position, rune, bool) {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == '\n' {
			line, col = line+1, 1
			i += size
			continue
		}
		printable := r == '\t' || r == '\r' || r == 0x85 ||
			(r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xd7ff) ||
			(r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
		if r == utf8.RuneError && size == 1 {
			printable = true // invalid UTF-8 is reported by the library with its own message
		}
		if !printable {
			return position{line: line, col: col}, r, true
		}
		i += size
		col++
	}
	return position{}, 0, false
}

func (d *doc) pos(n *yaml.Node) position {
	if n == nil {
		return position{file: d.file}
	}
	return position{d.file, n.Line, n.Column}
}

func (d *doc) errorf(n *yaml.Node, format string, args ...any) {
	d.p.errorf(d.pos(n), format, args...)
}

// maxAliasDepth bounds alias chasing; YAML forbids an alias of an alias, so
// one step is normal and more means a malformed tree.
const maxAliasDepth = 4

// deref follows an alias (*anchor) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing (null)"
		}
		return fmt.Sprintf("%q", n.Value)
	default:
		return "an alias"
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// field handles one key of a mapping; key is for positions, val is the value.
type field func(key, val *yaml.Node)

// mapping walks a mapping in document order, calling the handler of each
// known key. Unknown and repeated keys are errors: strict decoding.
func (d *doc) mapping(n *yaml.Node, what string, fields map[string]field) {
	n = deref(n)
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: want a mapping, got %s", what, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errorf(n.Content[i], "%s: a key must be a plain word", what)
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.errorf(k, "%s: merge keys (<<) are not supported", what)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, "%s: duplicate key %q (first at line %d)", what, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		h, ok := fields[k.Value]
		if !ok {
			d.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, knownKeys(fields))
			continue
		}
		if v = deref(v); v == nil {
			d.errorf(k, "%s.%s: unreadable value", what, k.Value)
			continue
		}
		h(k, v)
	}
}

// pairs walks a free-form mapping (args, env), reporting repeated keys.
func (d *doc) pairs(n *yaml.Node, what string, fn func(key, val *yaml.Node)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: want a mapping, got %s", what, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if v == nil {
			d.errorf(n.Content[i], "%s: unreadable value", what)
			continue
		}
		if k == nil || k.Kind != yaml.ScalarNode || isNull(k) {
			d.errorf(n.Content[i], "%s: a key must be a plain word", what)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, "%s: duplicate key %q (first at line %d)", what, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		fn(k, v)
	}
}

func knownKeys(fields map[string]field) string {
	return strings.Join(slices.Sorted(maps.Keys(fields)), ", ")
}

// str returns a scalar's text; any scalar (a number, a boolean) is taken as
// written.
func (d *doc) str(n *yaml.Node, what string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		if n != nil {
			d.errorf(n, "%s: want a string, got %s", what, kindName(n))
		}
		return "", false
	}
	return n.Value, true
}

// choice is a string that must be one of options; a problem reads
// "what: "x": want a or b".
func (d *doc) choice(n *yaml.Node, what string, options ...string) (string, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return "", false
	}
	if !slices.Contains(options, s) {
		want := strings.Join(options[:len(options)-1], ", ") + " or " + options[len(options)-1]
		d.errorf(n, "%s: %q: want %s", what, s, want)
		return s, false
	}
	return s, true
}

// word is a string that ends up on a command line or in an environment:
// NUL cannot be passed to a process at all and a newline would split the
// command, so both are refused.
func (d *doc) word(n *yaml.Node, what string) (string, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return "", false
	}
	return s, d.checkWord(n, what, s)
}

func (d *doc) checkWord(n *yaml.Node, what, s string) bool {
	switch {
	case strings.ContainsRune(s, 0):
		d.errorf(n, "%s: contains a NUL byte", what)
		return false
	case strings.ContainsAny(s, "\n\r"):
		d.errorf(n, "%s: contains a newline", what)
		return false
	}
	return true
}

func (d *doc) integer(n *yaml.Node, what string) (int, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		if n != nil {
			d.errorf(n, "%s: want an integer, got %s", what, kindName(n))
		}
		return 0, false
	}
	var v int
	if err := n.Decode(&v); err != nil {
		d.errorf(n, "%s: %q is not an integer this tool can use", what, n.Value)
		return 0, false
	}
	return v, true
}

// intAtLeast decodes an integer and checks it against a lower bound (0 or
// 1 in practice), reporting a value below it with the value shown. The
// value is returned either way, so later checks see what was written.
func (d *doc) intAtLeast(n *yaml.Node, what string, least int) (int, bool) {
	v, ok := d.integer(n, what)
	if ok && v < least {
		if least == 0 {
			d.errorf(n, "%s: must not be negative, got %d", what, v)
		} else {
			d.errorf(n, "%s: must be at least %d, got %d", what, least, v)
		}
	}
	return v, ok
}

func (d *doc) number(n *yaml.Node, what string) (float64, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		if n != nil {
			d.errorf(n, "%s: want a number, got %s", what, kindName(n))
		}
		return 0, false
	}
	var v float64
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, "%s: %q is not a finite number", what, n.Value)
		return 0, false
	}
	return v, true
}

// percent decodes a percentage (ParsePercent's rule): `2%`, `2.5%`, or a
// bare number read as percent (`2` is 2%); a bare number between 0 and 1
// is refused as ambiguous.
func (d *doc) percent(n *yaml.Node, what string) (float64, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		if n != nil {
			d.errorf(n, "%s: want a percentage like 2%%, got %s", what, kindName(n))
		}
		return 0, false
	}
	switch n.ShortTag() {
	case "!!int", "!!float", "!!str":
	default:
		d.errorf(n, "%s: want a percentage like 2%%, got %s", what, kindName(n))
		return 0, false
	}
	v, err := ParsePercent(n.Value)
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

func (d *doc) boolean(n *yaml.Node, what string) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		if n != nil {
			d.errorf(n, "%s: want true or false, got %s", what, kindName(n))
		}
		return false, false
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		d.errorf(n, "%s: want true or false, got %q", what, n.Value)
		return false, false
	}
	return v, true
}

// duration parses a Go duration ("30s", "5m", "1h30m", "200ms"). A bare
// number is refused: its unit would be a guess.
func (d *doc) duration(n *yaml.Node, what string) (time.Duration, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		d.errorf(n, "%s: unparsable duration %q (want e.g. 200ms, 30s, 5m, 1h30m)", what, s)
		return 0, false
	}
	return v, true
}

// positiveDuration is duration that must be > 0.
func (d *doc) positiveDuration(n *yaml.Node, what string) (time.Duration, bool) {
	v, ok := d.duration(n, what)
	if ok && v <= 0 {
		d.errorf(n, "%s: must be longer than 0, got %s", what, n.Value)
		return 0, false
	}
	return v, ok
}

// words decodes a list of command words.
func (d *doc) words(n *yaml.Node, what string) ([]string, bool) {
	if n == nil || n.Kind != yaml.SequenceNode {
		if n != nil {
			d.errorf(n, "%s: want a list of words, got %s", what, kindName(n))
		}
		return nil, false
	}
	if len(n.Content) == 0 {
		d.errorf(n, "%s: empty list", what)
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		c = deref(c)
		w, good := d.word(c, fmt.Sprintf("%s[%d]", what, i))
		ok = ok && good
		out = append(out, w)
	}
	if ok {
		ok = d.checkProgram(deref(n.Content[0]), what, out[0])
	}
	return out, ok
}

// checkProgram checks a command's first word: a program must be named, and
// env(1), which starts every launch, would take NAME=VALUE for a variable.
func (d *doc) checkProgram(n *yaml.Node, what, w string) bool {
	switch {
	case strings.TrimSpace(w) == "":
		d.errorf(n, "%s: the first word (the program) is empty", what)
		return false
	case strings.ContainsRune(w, '='):
		d.errorf(n, "%s: the program %q contains '='", what, w)
		return false
	}
	return true
}
