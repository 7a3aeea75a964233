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
	opts, ok := pythonOptions(help, "Usage:", false, clickEntry)
	if !ok {
		return nil, fmt.Errorf("%w: no click \"Usage:\" line", ErrNotHelp)
	}
	return &Table{Options: opts}, nil
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
