package remote

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// The ssh_config reader understands Host blocks, and of Match only "all"
// and a single "host" criterion; any other Match line (user, exec,
// several criteria) makes it refuse the whole file, which would make
// bakeoff unusable for anyone whose ~/.ssh/config has one. So Match lines
// are evaluated here, per target, and handed to the reader as Host lines
// that match everything or nothing. Include is inlined first so that Match
// lines in included files get the same treatment.

// maxIncludeDepth bounds nested Include directives, as OpenSSH does.
const maxIncludeDepth = 16

// neverHost is a Host pattern no target can have (.invalid is reserved).
const neverHost = "bakeoff-match-not-applied.invalid"

var (
	matchLineRE   = regexp.MustCompile(`(?i)^\s*match(?:\s*=\s*|\s+)(.*)$`)
	includeLineRE = regexp.MustCompile(`(?i)^\s*include(?:\s*=\s*|\s+)(.*)$`)
)

// cfgLine is one line of the flattened config and where it came from.
type cfgLine struct {
	text string
	file string
	line int
}

// readConfigLines reads path with its Include directives inlined, in the
// order OpenSSH reads them (each glob's matches sorted).
func readConfigLines(file, home string, depth int) ([]cfgLine, error) {
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("%s: Include nested more than %d deep (a loop?)", file, maxIncludeDepth)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []cfgLine
	for i, text := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		m := includeLineRE.FindStringSubmatch(text)
		if m == nil {
			out = append(out, cfgLine{text, file, i + 1})
			continue
		}
		out = append(out, cfgLine{"", file, i + 1}) // keeps the including file's line count
		for _, pat := range configWords(stripComment(m[1])) {
			switch {
			case pat == "~" || strings.HasPrefix(pat, "~/"):
				pat = home + pat[1:]
			case !filepath.IsAbs(pat):
				pat = filepath.Join(home, ".ssh", pat)
			}
			files, err := filepath.Glob(pat)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: Include %s: %w", file, i+1, pat, err)
			}
			for _, f := range files {
				inc, err := readConfigLines(f, home, depth+1)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: Include: %w", file, i+1, err)
				}
				out = append(out, inc...)
			}
		}
	}
	return out, nil
}

// stripComment drops a trailing "# comment" outside quotes.
func stripComment(s string) string {
	quoted := false
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == '#' && !quoted:
			return s[:i]
		}
	}
	return s
}

// configWords splits a value into words as OpenSSH does: on blanks, with
// double quotes grouping.
func configWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// matchTarget is what Match criteria are evaluated against.
type matchTarget struct {
	alias     string // the name as written (originalhost)
	host      string // after HostName (host)
	user      string // the remote user
	localUser string
}

// evalMatch evaluates one Match line's criteria (all must hold). ok is false
// when a criterion cannot be evaluated here; why then says which.
func evalMatch(args string, t matchTarget) (matched, ok bool, why string) {
	words := configWords(stripComment(args))
	if len(words) == 0 {
		return false, false, "Match with no criteria"
	}
	matched = true
	for i := 0; i < len(words); i++ {
		kw := strings.ToLower(words[i])
		negate := strings.HasPrefix(kw, "!")
		kw = strings.TrimPrefix(kw, "!")
		var res bool
		switch kw {
		case "all":
			res = true
		case "canonical":
			res = false // bakeoff does not canonicalize host names
		case "final":
			res = true // OpenSSH applies these blocks on its final pass
		case "host", "originalhost", "user", "localuser", "exec", "localnetwork", "tagged":
			if i+1 >= len(words) {
				return false, false, fmt.Sprintf("Match %s needs an argument", kw)
			}
			i++
			arg := words[i]
			switch kw {
			case "host":
				res = matchPatternList(arg, t.host)
			case "originalhost":
				res = matchPatternList(arg, t.alias)
			case "user":
				res = matchPatternList(arg, t.user)
			case "localuser":
				res = matchPatternList(arg, t.localUser)
			case "tagged":
				res = matchPatternList(arg, "") // no tag is ever set (ssh -P)
			default:
				return false, false, fmt.Sprintf("Match %s is not evaluated by bakeoff", kw)
			}
		default:
			return false, false, fmt.Sprintf("unknown Match criterion %q", words[i])
		}
		if negate {
			res = !res
		}
		matched = matched && res
	}
	return matched, true, ""
}

// matchPatternList matches s against an OpenSSH pattern list: comma-
// separated globs (* and ?), any "!" one that matches vetoes. Case does not
// matter, as for host names.
func matchPatternList(list, s string) bool {
	found := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if glob(strings.ToLower(p), strings.ToLower(s)) {
			if neg {
				return false
			}
			found = true
		}
	}
	return found
}

// glob matches OpenSSH's patterns: * is any run of characters, ? any one;
// everything else, brackets included, stands for itself.
func glob(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if glob(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		default:
			if s == "" || pattern[0] != s[0] {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		}
	}
	return s == ""
}

// decodeLines hands the flattened config to the reader with each Match line
// replaced by the Host line decide gives it. The line count is kept, so a
// line number the reader reports counts lines of the flattened file.
func decodeLines(lines []cfgLine, decide func(i int, args string) string) (*ssh_config.Config, error) {
	var b strings.Builder
	for i, l := range lines {
		if m := matchLineRE.FindStringSubmatch(l.text); m != nil {
			b.WriteString("Host " + decide(i, m[1]))
		} else {
			b.WriteString(l.text)
		}
		b.WriteByte('\n')
	}
	return ssh_config.DecodeBytes([]byte(b.String()))
}
