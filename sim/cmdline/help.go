package cmdline

import (
	"strconv"
	"strings"
	"unicode"
)

// The sim's --help and usage, written from the flag table as Python 3.12's
// argparse.HelpFormatter writes SGLang's (SGLang's images run Python 3.12;
// 3.13 shows an option's metavar once instead of after each alias), so that
// a reader of SGLang's help reads the sim's the same way.

// terminalWidth is the column count argparse assumes without a terminal
// and without $COLUMNS (shutil.get_terminal_size's fallback), as when the
// help is read over SSH.
const terminalWidth = 80

// maxHelpPosition is HelpFormatter's max_help_position: the column where
// help texts start when an option's invocation is long.
const maxHelpPosition = 24

// Columns is the terminal width argparse would use from $COLUMNS (a
// positive number), else terminalWidth.
func Columns(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return terminalWidth
}

// Usage is argparse's usage message for a terminal of columns columns:
// "usage: sglang serve [-h] [--model-path MODEL_PATH] …", wrapped, with a
// final newline.
func Usage(columns int) string {
	width := columns - 2
	const prefix = "usage: "
	var parts []string
	for _, f := range flagTable() {
		if !f.hidden {
			parts = append(parts, "["+usagePart(f)+"]")
		}
	}
	usage := progName + " " + strings.Join(parts, " ")
	if len(prefix)+len(usage) <= width {
		return prefix + usage + "\n"
	}
	// Long: the options follow the prog, wrapped, later lines aligned under
	// the first option (SGLang's prog is short enough for that form).
	indent := strings.Repeat(" ", len(prefix)+len(progName)+1)
	var lines []string
	line := []string{progName}
	lineLen := len(prefix) - 1 + len(progName) + 1
	for _, p := range parts {
		if lineLen+1+len(p) > width {
			lines = append(lines, indent+strings.Join(line, " "))
			line, lineLen = nil, len(indent)-1
		}
		line = append(line, p)
		lineLen += len(p) + 1
	}
	lines = append(lines, indent+strings.Join(line, " "))
	lines[0] = lines[0][len(indent):]
	return prefix + strings.Join(lines, "\n") + "\n"
}

// Help is the whole --help: the usage, then every option under "options:".
func Help(columns int) string {
	width := columns - 2
	const indent = 2
	longest := 0
	for _, f := range flagTable() {
		if !f.hidden {
			longest = max(longest, len(invocation(f))+indent)
		}
	}
	helpPos := min(longest+2, min(maxHelpPosition, max(width-20, 2*indent)))
	var b strings.Builder
	b.WriteString(Usage(columns))
	b.WriteString("\noptions:\n")
	helpWidth := max(width-helpPos, 11)
	actionWidth := helpPos - indent - 2
	for _, f := range flagTable() {
		if f.hidden {
			continue
		}
		header := invocation(f)
		lines := wrapText(helpText(f), helpWidth)
		if len(header) <= actionWidth && len(lines) > 0 {
			b.WriteString(strings.Repeat(" ", indent) + header + strings.Repeat(" ", actionWidth-len(header)+2) + lines[0] + "\n")
			lines = lines[1:]
		} else {
			b.WriteString(strings.Repeat(" ", indent) + header + "\n")
		}
		for _, l := range lines {
			b.WriteString(strings.Repeat(" ", helpPos) + l + "\n")
		}
	}
	return b.String()
}

// metavar is what stands for the flag's value: its own, the choices in
// braces, or the dest in upper case.
func metavar(f *flagSpec) string {
	switch {
	case f.metavar != "":
		return f.metavar
	case len(f.choices) > 0:
		return "{" + strings.Join(f.choices, ",") + "}"
	default:
		return strings.ToUpper(f.destName())
	}
}

// args is the value part of an invocation, as argparse's _format_args.
func args(f *flagSpec) string {
	m := metavar(f)
	switch f.kind {
	case kindBool, kindBoolOpt, kindHelp:
		return ""
	case kindOptional:
		return "[" + m + "]"
	case kindList:
		return m + " [" + m + " ...]"
	case kindListStar:
		return "[" + m + " ...]"
	}
	return m
}

// invocation is the flag's line in the options list: every option string,
// each followed by the value's metavar ("--tp-size TP_SIZE,
// --tensor-parallel-size TP_SIZE").
func invocation(f *flagSpec) string {
	opts := f.optionStrings()
	if a := args(f); a != "" {
		for i := range opts {
			opts[i] += " " + a
		}
	}
	return strings.Join(opts, ", ")
}

// usagePart is the flag in the usage line: its first option string and
// value; a BooleanOptionalAction shows both of its strings ("--x | --no-x"),
// as its format_usage does.
func usagePart(f *flagSpec) string {
	o := f.optionStrings()
	if f.kind == kindBoolOpt {
		return strings.Join(o, " | ")
	}
	if a := args(f); a != "" {
		return o[0] + " " + a
	}
	return o[0]
}

// noEffect starts the help of an SGLang flag the sim accepts but does not
// model (modelled.go), so that a reader of --help knows which flags change
// the simulation.
const noEffect = "[accepted, no effect] "

// helpText is the flag's help as the sim prints it.
func helpText(f *flagSpec) string {
	if f.modelledSet() {
		return f.help
	}
	return noEffect + f.help
}

// wrapText is textwrap.wrap as argparse calls it: whitespace runs become
// one space, and lines break between words or after a hyphen inside a
// word; a word longer than a line is cut.
func wrapText(text string, width int) []string {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return nil
	}
	var chunks []string
	for i, w := range strings.Split(text, " ") {
		if i > 0 {
			chunks = append(chunks, " ")
		}
		chunks = append(chunks, hyphenChunks(w)...)
	}
	var lines []string
	for len(chunks) > 0 {
		if len(lines) > 0 && chunks[0] == " " {
			chunks = chunks[1:]
		}
		var line []string
		n := 0
		for len(chunks) > 0 && n+len(chunks[0]) <= width {
			n += len(chunks[0])
			line = append(line, chunks[0])
			chunks = chunks[1:]
		}
		if len(chunks) > 0 && len(chunks[0]) > width {
			// A long word: as much as the line holds (at least one letter).
			cut := max(width-n, 1)
			line = append(line, chunks[0][:cut])
			chunks[0] = chunks[0][cut:]
		}
		if len(line) > 0 && line[len(line)-1] == " " {
			line = line[:len(line)-1]
		}
		lines = append(lines, strings.Join(line, ""))
	}
	return lines
}

// hyphenChunks splits a word where textwrap's wordsep_re lets a line break
// after a hyphen: the hyphen follows two letters (or letter-hyphen-letter)
// and a letter follows it. (textwrap also splits at em-dashes, "--" between
// words; the help texts here have none inside a word.)
func hyphenChunks(w string) []string {
	isLetter := func(i int) bool {
		return i >= 0 && i < len(w) && (unicode.IsLetter(rune(w[i])) || w[i] == '_')
	}
	var out []string
	start := 0
	for j := 1; j < len(w)-1; j++ {
		if w[j] != '-' {
			continue
		}
		// The hyphen ends a chunk only after one character of it at least;
		// the letters before it may lie in the chunk before (a lookbehind).
		before := j > start && ((isLetter(j-2) && isLetter(j-1)) ||
			(isLetter(j-3) && w[j-2] == '-' && isLetter(j-1)))
		after := isLetter(j+1) && (isLetter(j+2) || (j+3 < len(w) && w[j+2] == '-' && isLetter(j+3)))
		if before && after {
			out = append(out, w[start:j+1])
			start = j + 1
		}
	}
	return append(out, w[start:])
}
