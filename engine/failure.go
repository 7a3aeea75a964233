package engine

import (
	"regexp"
	"slices"
	"strings"
)

// Failure is what a server's log says about why the server failed.
type Failure struct {
	// Line is the line that says what went wrong, "" when the log has none
	// (see Profile.Failure for which line that is).
	Line string
	// Excerpt is the lines worth reading, in log order, with "…" where lines
	// were left out: the error line, the head and exception of the first
	// Python traceback, the exception of the last one, then the last lines
	// of the log. Blank lines are left out.
	Excerpt string
}

// DefaultFailureContext is how many of the log's last lines a failure's
// excerpt keeps after its error lines: what the server did last.
const DefaultFailureContext = 5

// tracebackHead starts every Python traceback.
const tracebackHead = "Traceback (most recent call last)"

// commonErrorLines are the lines any engine's log uses to say something went
// wrong: an error (`error:`, `ERROR`, `[ERROR]`), a Python exception's type
// name, a fatal error, a C++ exception ending the process, a crash.
var commonErrorLines = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\berror\b`),
	regexp.MustCompile(`\b[A-Z]\w*(Error|Exception)\b`),
	regexp.MustCompile(`(?i)\bfatal\b`),
	regexp.MustCompile(`terminate called after throwing|Segmentation fault|\bpanic: `),
}

// pyException is the line that ends a Python traceback, once the log's own
// prefix is taken off: the exception's dotted type name, then its message
// ("ValueError: …", "torch.OutOfMemoryError: …", "KeyboardInterrupt"). Frame
// lines are indented, and the lines between chained tracebacks have spaces
// before their colon, so neither matches.
var pyException = regexp.MustCompile(`^[A-Za-z_][\w.]*(:\s|:$|$)`)

// Failure reads a log tail for the line that says why the server failed:
// the first line matching the engine's ErrorLines (the engine's own words
// for its root cause), else the exception that ends the first Python
// traceback (later ones are usually its consequences: "Engine core
// initialization failed. See root cause above."), else the first error-like
// line (commonErrorLines, or one of the engine's Fatal signatures). The
// first, because a server that fails says why and then what that broke:
// llama-server prints its usage after a bad argument, and its model loader
// reports the cause before every caller reports the failure.
func (p *Profile) Failure(log string) Failure {
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return Failure{}
	}
	tbs := tracebacks(lines)
	at, line := -1, ""
	if i := slices.IndexFunc(lines, func(l string) bool { return matchesAny(l, p.ErrorLines) }); i >= 0 {
		at, line = i, lines[i]
	} else if i := slices.IndexFunc(tbs, func(t traceback) bool { return t.exc >= 0 }); i >= 0 {
		at, line = tbs[i].exc, strings.TrimPrefix(lines[tbs[i].exc], tbs[i].prefix)
	} else if i := slices.IndexFunc(lines, p.errorLike); i >= 0 {
		at, line = i, lines[i]
	}
	keep := map[int]bool{}
	if at >= 0 {
		keep[at] = true
	}
	if len(tbs) > 0 {
		first, last := tbs[0], tbs[len(tbs)-1]
		keep[first.head] = true
		for _, i := range []int{first.exc, last.exc} {
			if i >= 0 {
				keep[i] = true
			}
		}
	}
	for i := max(0, len(lines)-DefaultFailureContext); i < len(lines); i++ {
		keep[i] = true
	}
	var out []string
	prev := -1
	for i, l := range lines {
		if !keep[i] {
			continue
		}
		if i > prev+1 {
			out = append(out, "…")
		}
		out = append(out, l)
		prev = i
	}
	return Failure{Line: strings.TrimSpace(line), Excerpt: strings.Join(out, "\n")}
}

// errorLike reports whether a log line says something went wrong, in the
// words any engine uses or in one of this engine's fatal signatures.
func (p *Profile) errorLike(line string) bool {
	return matchesAny(line, commonErrorLines) || p.FatalLine(line) != ""
}

func matchesAny(line string, patterns []*regexp.Regexp) bool {
	return slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(line) })
}

// traceback is one Python traceback in a log: the indexes of its head line
// and of its exception (-1 when the log ends, or another traceback starts,
// before one), and the log's prefix on the head line, which loggers such as
// vLLM's repeat on every line of it.
type traceback struct {
	head, exc int
	prefix    string
}

// tracebacks finds the Python tracebacks in lines, in order.
func tracebacks(lines []string) []traceback {
	var out []traceback
	for i := 0; i < len(lines); i++ {
		at := strings.Index(lines[i], tracebackHead)
		if at < 0 {
			continue
		}
		tb := traceback{head: i, exc: -1, prefix: lines[i][:at]}
		for j := i + 1; j < len(lines) && !strings.Contains(lines[j], tracebackHead); j++ {
			// SGLang's head line carries a prefix ("… Scheduler hit an
			// exception: ") that the frames below it do not.
			if pyException.MatchString(strings.TrimPrefix(lines[j], tb.prefix)) {
				tb.exc = j
				break
			}
		}
		out = append(out, tb)
		if tb.exc >= 0 {
			i = tb.exc
		}
	}
	return out
}
