package preflight

import (
	"fmt"
	"strings"
)

// parseArgparse reads Python argparse's help (HelpFormatter, as SGLang's
// `python -m sglang.launch_server --help` and vLLM's `vllm serve
// --help=all` print it): a "usage:" line, then sections ("options:",
// "positional arguments:", one per argument group), each entry
//
//	--tp-size TP_SIZE, --tp TP_SIZE
//	                      The tensor parallelism size.
//	--attention-backend {fa3,flashinfer,triton}
//	--trust-remote-code   Whether or not to allow ...
//	--enable-x, --no-enable-x     (BooleanOptionalAction)
//
// indented two spaces, its help beside it or below it, indented further.
// Python 3.13 writes the metavar once, after the last spelling
// ("--tp-size, --tp TP_SIZE"); older ones after each. Lines before
// "usage:" (a log line an import printed) are skipped.
func parseArgparse(help string) (*Table, error) {
	opts, ok := pythonOptions(help, "usage:", true, argparseEntry)
	if !ok {
		return nil, fmt.Errorf("%w: no argparse \"usage:\" line", ErrNotHelp)
	}
	return &Table{Abbrev: true, Options: opts}, nil
}

// argparseEntry reads one invocation: spellings separated by ", ", each
// possibly followed by its metavar.
func argparseEntry(inv string) *Option {
	o := &Option{}
	metavar := ""
	for _, part := range splitSpellings(inv) {
		name, mv, _ := strings.Cut(part, " ")
		o.Names = append(o.Names, name)
		if mv = strings.TrimSpace(mv); mv != "" {
			metavar = mv
		}
	}
	o.Arity, o.Choices = argparseMetavar(metavar)
	return o
}

// splitSpellings splits "--a A, --b A" at each ", " that starts another
// spelling; a comma inside a metavar ({x,y}) has no space after it.
func splitSpellings(inv string) []string {
	var out []string
	for _, p := range strings.Split(inv, ", ") {
		if strings.HasPrefix(p, "-") || len(out) == 0 {
			out = append(out, p)
		} else {
			out[len(out)-1] += ", " + p
		}
	}
	return out
}

// argparseMetavar reads argparse's rendering of nargs and choices:
// "X" one value, "[X]" an optional one, "X [X ...]" and "[X ...]" many,
// "{a,b}" a choice.
func argparseMetavar(mv string) (Arity, []string) {
	if mv == "" {
		return NoValue, nil
	}
	arity := OneValue
	switch {
	case strings.HasSuffix(mv, "...]"):
		arity = ManyValues
	case strings.HasPrefix(mv, "[") && strings.HasSuffix(mv, "]"):
		arity = OptionalValue
		mv = mv[1 : len(mv)-1]
	}
	mv = strings.TrimPrefix(mv, "[")
	if strings.HasPrefix(mv, "{") {
		if end := strings.IndexByte(mv, '}'); end > 0 {
			return arity, strings.Split(mv[1:end], ",")
		}
	}
	return arity, nil
}
