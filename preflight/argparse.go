package preflight

import (
	"fmt"
	"regexp"
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
	o.Arity, o.Choices, o.OpenChoices = argparseMetavar(metavar)
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
// "{a,b}" a choice, "['a', 'b']" values listed in a metavar. open says why
// the listed values are not all the option takes; empty when they are a
// closed set (see openChoices).
func argparseMetavar(mv string) (arity Arity, choices []string, open string) {
	if mv == "" {
		return NoValue, nil, ""
	}
	if m := pyListRe.FindStringSubmatch(mv); m != nil {
		return OneValue, strings.Split(m[1], "', '"), "its help lists them as a metavar (a Python list), which argparse does not check"
	}
	arity = OneValue
	switch {
	case strings.HasSuffix(mv, "...]"):
		arity = ManyValues
	case strings.HasPrefix(mv, "[") && strings.HasSuffix(mv, "]"):
		arity = OptionalValue
		mv = mv[1 : len(mv)-1]
	}
	mv = strings.TrimPrefix(mv, "[")
	if !strings.HasPrefix(mv, "{") {
		return arity, nil, ""
	}
	end := strings.IndexByte(mv, '}')
	if end < 0 {
		return arity, nil, ""
	}
	if more := openChoices(mv[:end+1], mv[end+1:]); more != "" {
		open = fmt.Sprintf("its help adds %q", more)
	}
	return arity, strings.Split(mv[1:end], ","), open
}

// pyListRe is a metavar given as a Python list of strings, which argparse
// prints as Python writes the list: "['auto', 'hf', 'mistral']".
var pyListRe = regexp.MustCompile(`^\['([^']*(?:', '[^']*)*)'\]$`)

// openChoices returns the words of a metavar beginning with braces that
// make its set open: "" when the braces are argparse's rendering of a closed
// choices=.
//
// argparse writes "{a,b}" for an option declared with choices= and no
// metavar, repeated or bracketed for nargs ("{a,b} [{a,b} ...]", "[{a,b}]"),
// and refuses any other value (_check_value). A program that gives a
// metavar of its own shows what it likes, and argparse checks nothing:
//
//   - vLLM declares --tool-call-parser with no choices= and the metavar
//     "{<built-in parsers>} or name registered in --tool-parser-plugin"
//     (vllm-project/vllm, vllm/entrypoints/openai/cli_args.py,
//     BaseFrontendArgs._customize_cli_kwargs, at commit
//     005223338608bc94fd165a4f976c102a57bd1fc4): a parser a plugin
//     registers is valid though the help does not list it;
//   - for a config field typed Literal[…] | str, vLLM passes the sorted
//     values as metavar= instead of choices= (vllm/engine/arg_utils.py,
//     literal_to_kwargs, at commit 99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b),
//     which argparse prints as a Python list (--load-format,
//     --tokenizer-mode): any string is taken (pyListRe).
//
// So braces make a closed set only when they, and argparse's nargs
// decoration, are the whole metavar.
func openChoices(braces, rest string) string {
	left := strings.ReplaceAll(rest, braces, "")
	if strings.Trim(left, " [].") == "" {
		return ""
	}
	return strings.TrimSpace(rest)
}
