package cmdline

import (
	_ "embed"
	"fmt"
	"strings"
)

// sglangArgsTSV is SGLang's whole command line, one argparse action a line,
// as scripts/sglang-args.py reads it from SGLang's source (its header names
// the files and commits; `make sglang-args` rewrites it and the preflight's
// fixture together). The sim takes every action in it with argparse's
// checks, so it refuses exactly what that SGLang refuses; modelled.go says
// which of them the sim acts on.
//
//go:embed sglang_args.tsv
var sglangArgsTSV string

// tsvColumns are the table's columns, in order (the script's docstring says
// what each holds).
var tsvColumns = []string{"options", "kind", "dest", "type", "choices", "deprecated", "hidden", "required", "help"}

// tsvKinds maps the table's kind column to how the parser takes a value.
var tsvKinds = map[string]flagKind{
	"flag":     kindBool,
	"boolopt":  kindBoolOpt,
	"value":    kindValue,
	"optional": kindOptional,
	"list":     kindList,
	"list*":    kindListStar,
}

// parseSGLangArgs reads the table into flag specs, in its order. -h/--help
// is the table's first action, as argparse adds it first.
func parseSGLangArgs(text string) ([]flagSpec, error) {
	var out []flagSpec
	header := false
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != len(tsvColumns) {
			return nil, fmt.Errorf("sglang_args.tsv line %d: %d columns, want %d", i+1, len(cols), len(tsvColumns))
		}
		if !header {
			if strings.Join(cols, "\t") != strings.Join(tsvColumns, "\t") {
				return nil, fmt.Errorf("sglang_args.tsv line %d: columns %q, want %q", i+1, cols, tsvColumns)
			}
			header = true
			continue
		}
		f, err := tsvAction(cols)
		if err != nil {
			return nil, fmt.Errorf("sglang_args.tsv line %d: %w", i+1, err)
		}
		out = append(out, f)
	}
	if len(out) == 0 || out[0].kind != kindHelp {
		return nil, fmt.Errorf("sglang_args.tsv: -h/--help is not the first action")
	}
	return out, nil
}

// tsvAction is one line of the table as a flag spec, without a setter.
func tsvAction(cols []string) (flagSpec, error) {
	f := flagSpec{dest: cols[2], typ: cols[3], hidden: cols[6] == "y", required: cols[7] == "y", help: unescapeTSV(cols[8])}
	for _, o := range strings.Fields(cols[0]) {
		f.names = append(f.names, strings.TrimLeft(o, "-"))
		f.short = f.short || !strings.HasPrefix(o, "--")
	}
	kind, ok := tsvKinds[cols[1]]
	if !ok {
		return f, fmt.Errorf("%s: unknown kind %q", cols[0], cols[1])
	}
	f.kind = kind
	if f.dest == "help" && f.short {
		f.kind = kindHelp
	}
	if cols[4] != "-" {
		f.choices = strings.Split(cols[4], ",")
	}
	switch dep := unescapeTSV(cols[5]); {
	case dep == "-":
	case dep == "?":
		f.deprecated = deprecatedWarn
	case strings.HasPrefix(dep, "!"):
		f.deprecated, f.refusal = deprecatedRefused, dep[1:]
	case strings.HasPrefix(dep, "="):
		f.deprecated, f.replacement = deprecatedAlias, dep[1:]
	default:
		return f, fmt.Errorf("%s: unknown deprecation %q", cols[0], dep)
	}
	return f, nil
}

// unescapeTSV undoes the table's escapes of backslash, tab and newline.
func unescapeTSV(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
