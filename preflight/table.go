package preflight

import (
	"slices"
	"strings"
)

// Arity says whether an option takes a value, as its help shows it.
type Arity int

const (
	// NoValue is a flag: `--trust-remote-code`.
	NoValue Arity = iota
	// OneValue takes exactly one: `--tp-size TP_SIZE`.
	OneValue
	// OptionalValue may take one: argparse's nargs='?' (`[X]`), llama.cpp's
	// `[on|off|auto]`.
	OptionalValue
	// ManyValues takes one or more (argparse's `X [X ...]`) or none or more
	// (`[X ...]`): every word up to the next option is its value.
	ManyValues
)

// Option is one option of an engine's command line: every spelling it
// answers to and what the help says of it.
type Option struct {
	// Names are every spelling, as the help lists them ("--model-path",
	// "--model"; "-c", "--ctx-size"; "--perf", "--no-perf").
	Names []string
	Arity Arity
	// Choices are the values the help lists ({a,b}, [a|b], <0|1>,
	// "allowed values: …"); nil: any value.
	Choices []string
	// OpenChoices says, in words for a finding, why Choices are not all
	// the option takes (`its help adds "or name registered in
	// --tool-parser-plugin"`): a value outside them is then a warning, not
	// an error. Empty when Choices are a closed set.
	OpenChoices string
	// Deprecated is set when the help marks the option deprecated;
	// Replacement then names what to use instead, when the help says.
	Deprecated bool
	// Removed is set when the help says the option has been removed (llama.cpp
	// lists them: "the argument has been removed. use …"); the engine
	// refuses it. Replacement says what to use instead.
	Removed     bool
	Replacement string
	// Replaces are the flags the option's help says it replaces (SGLang's
	// --smg-grpc-mode: "Replaces the deprecated --grpc-mode."): once a build
	// drops one, the option is what to write instead.
	Replaces []string
	// Help is the option's help text on one line.
	Help string
}

// Table is every option an engine build accepts, read from its help.
type Table struct {
	// Format is the help format it was read from (engine.HelpArgparse, …).
	Format string
	// Options in the order the help lists them.
	Options []*Option
	// Abbrev says whether the parser takes a unique prefix of a long option
	// for the option: argparse's allow_abbrev, True unless the program
	// turns it off. SGLang's parser leaves it on
	// (python/sglang/srt/server_args.py, prepare_server_args:
	// argparse.ArgumentParser(prog="sglang serve")), and so does vLLM's
	// FlexibleArgumentParser, which sets only its formatter class.
	Abbrev bool
	// Underscores says whether the parser takes '_' for '-' in a long
	// option's name: vLLM's FlexibleArgumentParser (in vllm/utils) rewrites
	// them before argparse sees them, and llama.cpp's common_params_parse_ex
	// (common/arg.cpp) replaces them in every argument starting with "--".
	Underscores bool
	// JSONKeys says whether "--json-arg.key" and "--list+" set parts of
	// "--json-arg" and "--list" (vLLM's FlexibleArgumentParser).
	JSONKeys bool
	// InlineValues says whether "--name=value" gives a value (argparse and
	// click); llama.cpp looks the whole word up, so "--ctx-size=4096" is an
	// argument it does not know.
	InlineValues bool
	// StrictChoices says whether a value outside the listed choices is
	// refused (argparse and llama.cpp refuse it; click's Choice subclasses
	// may take aliases their help does not list, as trtllm-serve's --backend
	// takes "trt", so there it is a warning).
	StrictChoices bool
	// Version is the engine's version when its help or version call said
	// it; empty when unknown.
	Version string
	// Engine is the engine whose help it is (engine.SGLang, …); empty when
	// the caller did not say. A flag unknown to the help that the engine is
	// known to have removed is named with the replacement the engine's
	// own source gives (removed.go).
	Engine string

	byName map[string]*Option
}

// index builds the lookup by every spelling.
func (t *Table) index() {
	t.byName = map[string]*Option{}
	for _, o := range t.Options {
		for _, n := range o.Names {
			if _, dup := t.byName[n]; !dup {
				t.byName[n] = o
			}
		}
	}
}

// Lookup returns the option spelled exactly name, or nil.
func (t *Table) Lookup(name string) *Option {
	if t.byName == nil {
		t.index()
	}
	return t.byName[name]
}

// Names are every spelling of every option, sorted.
func (t *Table) Names() []string {
	var out []string
	for _, o := range t.Options {
		out = append(out, o.Names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// prefixed returns the long spellings that begin with name, sorted: the
// options an argparse abbreviation could stand for.
func (t *Table) prefixed(name string) []string {
	var out []string
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "--") && strings.HasPrefix(n, name) {
			out = append(out, n)
		}
	}
	return out
}
