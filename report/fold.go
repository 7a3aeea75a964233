package report

import (
	"strings"
	"unicode/utf8"
)

// fold breaks a line of prose into lines of at most width columns at its
// spaces (a line that fits is left as it is): the first line starts with first, the others with rest (a
// hanging indent, so a folded sentence still reads as one item). A word
// longer than a line (a path, a URL) is cut, since a terminal would wrap it
// anyway and misplace the indent. A width of 0 or less folds nothing.
func fold(s string, width int, first, rest string) []string {
	if width <= 0 || utf8.RuneCountInString(first+s) <= width {
		return []string{first + s} // as written, its spacing kept
	}
	var out []string
	line, lead := first, first
	for _, word := range strings.Fields(s) {
		switch {
		case line == lead:
			line += word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			out = append(out, line)
			line, lead = rest+word, rest
		}
		// A word too long for any line is cut into pieces that fit.
		for utf8.RuneCountInString(line) > width && utf8.RuneCountInString(lead) < width {
			r := []rune(line)
			out = append(out, string(r[:width]))
			line, lead = rest+string(r[width:]), rest
		}
	}
	return append(out, line)
}

// foldAll folds each of lines as fold does, with the same indents.
func foldAll(lines []string, width int, first, rest string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, fold(l, width, first, rest)...)
	}
	return out
}

// Fold is fold for the lines the CLI prints around the end of a run (a
// failed launch, a host given up on): the same folding, so that they too
// fit the terminal's width (0: DefaultWidth).
func Fold(s string, width int, first, rest string) []string {
	if width <= 0 {
		width = DefaultWidth
	}
	return fold(s, width, first, rest)
}
