package preflight

import (
	"fmt"
	"strings"
)

// parseClick reads Python click's help (`trtllm-serve serve --help`,
// tensorrt_llm/commands/serve.py): a "Usage:" line, then "Options:" with
// entries
//
//	--host TEXT                     Hostname of the server.
//	--backend [pytorch|tensorrt|_autodeploy]
//	                                The backend to use.
//	--trust_remote_code             Flag for HF transformers.
//	--x / --no-x                    a boolean pair
//
// indented two spaces, the help beside or below. click takes `--name=value`
// and no abbreviation.
func parseClick(help string) (*Table, error) {
	ls := lines(help)
	start := -1
	for i, l := range ls {
		if strings.HasPrefix(strings.TrimSpace(l), "Usage:") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%w: no click \"Usage:\" line", ErrNotHelp)
	}
	t := &Table{}
	var cur *Option
	for _, l := range ls[start+1:] {
		if strings.TrimSpace(l) == "" {
			cur = nil
			continue
		}
		in := indent(l)
		switch {
		case in == 0:
			cur = nil
		case in <= 4 && strings.HasPrefix(strings.TrimSpace(l), "-"):
			inv, h := splitCols(strings.TrimSpace(l))
			cur = clickEntry(inv)
			cur.Help = h
			t.Options = append(t.Options, cur)
		case cur != nil && in > 4:
			cur.Help = joinWrapped(cur.Help, l)
		default:
			cur = nil
		}
	}
	return t, nil
}

// clickEntry reads "-c, --config PATH", "--a / --no-a", "--b [x|y]".
func clickEntry(inv string) *Option {
	o := &Option{}
	metavar := ""
	for _, alt := range strings.Split(inv, " / ") {
		for _, part := range strings.Split(alt, ", ") {
			name, mv, _ := strings.Cut(strings.TrimSpace(part), " ")
			if !strings.HasPrefix(name, "-") {
				continue
			}
			o.Names = append(o.Names, name)
			if mv = strings.TrimSpace(mv); mv != "" {
				metavar = mv
			}
		}
	}
	switch {
	case metavar == "":
		o.Arity = NoValue
	case strings.HasPrefix(metavar, "[") && strings.HasSuffix(metavar, "]"):
		o.Arity = OneValue
		o.Choices = strings.Split(metavar[1:len(metavar)-1], "|")
	default:
		o.Arity = OneValue
	}
	return o
}
