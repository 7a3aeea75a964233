package campaign

import "strings"

// shellSafe reports whether b never needs quoting in a POSIX shell word.
// '=' is safe except in a command's first word (see ShellJoin); '~', '{',
// '*', '?', '[', '#' and the like are not.
func shellSafe(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("_-+=./,:@%", b) >= 0
}

// ShellQuote returns s as one POSIX sh word that the shell passes on byte
// for byte: unchanged when every byte is safe, otherwise in single quotes
// with each ' written as '\”. Nothing inside single quotes is interpreted,
// so $(...), backticks, globs and newlines arrive as written. NUL cannot be
// passed through a shell at all; callers refuse it first.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		if !shellSafe(s[i]) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes each word and joins them with spaces. A first word
// holding '=' is quoted too, so the shell cannot take it for an assignment.
func ShellJoin(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		q := ShellQuote(w)
		if i == 0 && q == w && strings.ContainsRune(w, '=') {
			q = "'" + w + "'"
		}
		b.WriteString(q)
	}
	return b.String()
}
