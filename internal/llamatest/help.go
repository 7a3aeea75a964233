package llamatest

import (
	_ "embed"
	"os"
	"slices"
	"strings"
)

// help is what a real llama-server prints for --help (a CPU build at
// commit 5eca4e3ca; its first lines say so, and the preflight's parser
// skips them), the same text as preflight/testdata/llama-server-help.txt:
// a campaign's preflight asks this server for its flags as it would ask
// llama-server.
//
//go:embed help.txt
var help string

// printHelp answers -h, --help and --usage as llama-server does: the help
// on stdout, exit status 0; and --version as common/arg.cpp does, on
// stderr, with this server's build (its /props build_info is
// b0000-llamatest). It reports whether args asked for either.
func printHelp(args []string) bool {
	if slices.Contains(args, "--version") {
		os.Stderr.WriteString("version: 0000 (llamatest)\nbuilt with go for a test\n")
		return true
	}
	if !slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" || a == "--usage" }) {
		return false
	}
	os.Stdout.WriteString(strings.TrimLeft(help, "\n"))
	return true
}
