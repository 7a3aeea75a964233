package engine

// Help formats: how an engine's --help lays out its options, which decides
// the parser that reads it (package preflight).
const (
	// HelpArgparse is Python's argparse (SGLang, vLLM): "usage:", then
	// sections of options, each "  -x, --long VALUE  help" with choices
	// written {a,b,c}.
	HelpArgparse = "argparse"
	// HelpLlamaCpp is llama.cpp's common/arg.cpp layout: spellings at the
	// start of a line, comma-separated, help from column 40, removed
	// options still listed ("the argument has been removed. use …").
	HelpLlamaCpp = "llamacpp"
	// HelpClick is Python click's (trtllm-serve): "Options:", then
	// "  --name [a|b|c]  help", booleans written "--x / --no-x".
	HelpClick = "click"
)

// HelpCall is how to ask an installed engine which flags it accepts: the
// words appended to its launcher (the profile's, or engine.command when a
// campaign replaces it) and the format of what it prints.
type HelpCall struct {
	Args   []string
	Format string
	// Underscores says the engine's parser takes '_' for '-' in a long
	// option's name and a ".key" suffix for part of a JSON option (vLLM's
	// FlexibleArgumentParser).
	Underscores bool
	// Version, when set, are the words after the launcher that print the
	// engine's version (llama.cpp's --version), which the preflight records
	// beside the help's hash; nil: the help is all it asks.
	Version []string
}

// HelpFormats are the formats a help call may name, for messages.
var HelpFormats = []string{HelpArgparse, HelpLlamaCpp, HelpClick}
