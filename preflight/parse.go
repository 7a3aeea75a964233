package preflight

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// ErrNotHelp is a text the parser of its format cannot read as a help: the
// program printed something else (a wrapper's own usage, an error, nothing).
var ErrNotHelp = errors.New("not a help text in this format")

// Parse reads a help text of format (engine.HelpArgparse, HelpLlamaCpp or
// HelpClick) into a Table. A text that is not such a help, or that lists
// no option, is ErrNotHelp.
func Parse(format string, help []byte) (*Table, error) {
	var t *Table
	var err error
	switch format {
	case engine.HelpArgparse:
		t, err = parseArgparse(string(help))
	case engine.HelpLlamaCpp:
		t, err = parseLlamaCpp(string(help))
	case engine.HelpClick:
		t, err = parseClick(string(help))
	default:
		return nil, fmt.Errorf("help format %q: want one of %s", format, strings.Join(engine.HelpFormats, ", "))
	}
	if err != nil {
		return nil, err
	}
	if len(t.Options) == 0 {
		return nil, fmt.Errorf("%w: no option found", ErrNotHelp)
	}
	t.Format = format
	t.StrictChoices = format != engine.HelpClick
	t.InlineValues = format != engine.HelpLlamaCpp
	t.Underscores = format == engine.HelpLlamaCpp
	for _, o := range t.Options {
		markHelp(o)
		markReplaces(o)
	}
	t.index()
	return t, nil
}

var (
	// deprecatedRe and removedRe find what a help says of an option's
	// standing; engines write it in the option's help, in words.
	deprecatedRe = regexp.MustCompile(`(?i)\bdeprecated\b`)
	// A help may say so of the option in its first word ("Removed. Use
	// --expert-balancedness-report-mode …", SGLang's
	// --enable-expert-distribution-metrics, which its parser refuses).
	removedRe = regexp.MustCompile(`(?i)\b(?:argument|option|flag)\b[^.]*\b(?:has been|was) removed\b|^\W*removed\b`)
	// replacementRe is what follows "use …", "alias of …", "replaced by …":
	// the rest of the sentence, without a closing "instead".
	replacementRe = regexp.MustCompile(`(?i)\b(?:use|alias (?:of|for)|replaced by|in favou?r of|renamed to)\s+(.+?)(?:\s+instead)?\s*(?:\.\s|\.$|\s\(|\)|;|$)`)
)

// markHelp reads deprecation and removal from an option's help text.
func markHelp(o *Option) {
	if removedRe.MatchString(o.Help) {
		o.Removed = true
	} else if saysDeprecated(o.Help) {
		o.Deprecated = true
	} else {
		return
	}
	if m := replacementRe.FindStringSubmatch(o.Help); m != nil {
		o.Replacement = strings.Trim(m[1], "'\"` ")
	}
}

// saysDeprecated reports whether a help calls its own option deprecated:
// "deprecated" not followed by another option's name, which is the help
// naming a flag this one replaces ("Replaces the deprecated --grpc-mode.",
// SGLang's --smg-grpc-mode).
func saysDeprecated(help string) bool {
	for _, m := range deprecatedRe.FindAllStringIndex(help, -1) {
		if !strings.HasPrefix(strings.TrimLeft(help[m[1]:], " "), "--") {
			return true
		}
	}
	return false
}

// replacesRe finds a flag an option's help says the option took the place
// of: "Replaces the deprecated --grpc-mode." (SGLang's --smg-grpc-mode),
// "formerly --x", "renamed from --x".
var replacesRe = regexp.MustCompile(`(?i)\b(?:replaces|supersedes|formerly|renamed from)\s+(?:the\s+)?(?:deprecated\s+|removed\s+|old\s+|legacy\s+)?(--[A-Za-z0-9][A-Za-z0-9_-]*)`)

// markReplaces reads from an option's help the flags it replaces.
func markReplaces(o *Option) {
	for _, m := range replacesRe.FindAllStringSubmatch(o.Help, -1) {
		if f := strings.TrimRight(m[1], "-_"); !slices.Contains(o.Names, f) && !slices.Contains(o.Replaces, f) {
			o.Replaces = append(o.Replaces, f)
		}
	}
}

// flagRe finds the first flag a replacement names.
var flagRe = regexp.MustCompile(`--?[A-Za-z0-9][A-Za-z0-9_.-]*`)

// firstFlag is the first flag in a replacement text, or "".
func firstFlag(s string) string {
	f := flagRe.FindString(s)
	if i := strings.IndexByte(f, '='); i >= 0 {
		f = f[:i]
	}
	return strings.TrimRight(f, ".")
}

// splitCols splits an entry line into the invocation and the help on the
// same line: they are separated by two or more spaces.
var colGap = regexp.MustCompile(`\s{2,}`)

func splitCols(s string) (inv, help string) {
	loc := colGap.FindStringIndex(s)
	if loc == nil {
		return s, ""
	}
	return s[:loc[0]], strings.TrimSpace(s[loc[1]:])
}

// joinWrapped adds a wrapped help line to the text before it. Python's
// textwrap (argparse's and click's formatters) also breaks after a hyphen
// inside a word ("--flashinfer-allreduce-fusion-" / "backend=auto"): such a
// break is joined without a space, so flag names in the help stay whole.
func joinWrapped(text, line string) string {
	line = strings.TrimSpace(line)
	if text == "" {
		return line
	}
	if n := len(text); n >= 2 && text[n-1] == '-' && isWordByte(text[n-2]) {
		return text + line
	}
	return text + " " + line
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// indent is the number of leading spaces.
func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// lines splits a help text, tabs expanded as the formatters never write
// them but a terminal might.
func lines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.ReplaceAll(s, "\t", "        "), "\n")
}

// pythonOptions reads the options of a Python CLI's help (argparse's and
// click's lay them out alike) from the line that starts with usage on: an
// entry is a line indented at most four columns that starts with "-", its
// help beside it or on the lines below, indented further; a line at the
// margin (a section heading) or any other line ends it. ok is false when
// no line starts with usage (compared without case when fold is set).
func pythonOptions(help, usage string, fold bool, entry func(inv string) *Option) (opts []*Option, ok bool) {
	ls := lines(help)
	start := -1
	for i, l := range ls {
		l = strings.TrimSpace(l)
		if fold {
			l = strings.ToLower(l)
		}
		if strings.HasPrefix(l, usage) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	var cur *Option
	for _, l := range ls[start+1:] {
		if strings.TrimSpace(l) == "" {
			cur = nil
			continue
		}
		in := indent(l)
		switch {
		case in == 0:
			cur = nil // a section heading, or the epilog
		case in <= 4 && strings.HasPrefix(strings.TrimSpace(l), "-"):
			inv, h := splitCols(strings.TrimSpace(l))
			cur = entry(inv)
			cur.Help = h
			opts = append(opts, cur)
		case cur != nil && in > 4:
			cur.Help = joinWrapped(cur.Help, l)
		default:
			cur = nil // a positional argument or a group's description
		}
	}
	return opts, true
}
