package preflight

import (
	"fmt"
	"regexp"
	"strings"
)

// llamaHelpCol is the column at which llama.cpp's help puts an option's
// description (common/arg.cpp pads the spellings to it); spellings that
// reach it push the description to the next line.
const llamaHelpCol = 40

// parseLlamaCpp reads llama.cpp's own help layout (`llama-server --help`,
// common/arg.cpp), as a build at commit 5eca4e3ca prints it:
//
//	----- common params -----
//
//	-t,    --threads N                      number of CPU threads to use ...
//	-fa,   --flash-attn [on|off|auto]       set Flash Attention use ...
//	--perf, --no-perf                       whether to enable ...
//	-ctk,  --cache-type-k TYPE              KV cache data type for K
//	                                        allowed values: f32, f16, bf16, ...
//	--draft, --draft-n, --draft-max N       the argument has been removed. use ...
//
// Spellings start at column 0, separated by commas; the value placeholder
// follows the last ({a,b} and <a|b> list choices, [a|b] an optional value);
// continuation lines are indented to column 40. llama.cpp takes no
// abbreviation.
func parseLlamaCpp(help string) (*Table, error) {
	ls := lines(help)
	t := &Table{}
	var cur *Option
	seen := false
	for _, l := range ls {
		if strings.HasPrefix(l, "-----") {
			seen, cur = true, nil
			continue
		}
		if strings.TrimSpace(l) == "" {
			cur = nil
			continue
		}
		if indent(l) == 0 {
			if !strings.HasPrefix(l, "-") {
				cur = nil // a header line, not an option
				continue
			}
			seen = true
			inv, h := l, ""
			if len(l) > llamaHelpCol && l[llamaHelpCol-1] == ' ' && l[llamaHelpCol] != ' ' {
				inv, h = strings.TrimSpace(l[:llamaHelpCol]), strings.TrimSpace(l[llamaHelpCol:])
			}
			cur = llamaEntry(strings.TrimSpace(inv))
			cur.Help = h
			t.Options = append(t.Options, cur)
			continue
		}
		if cur != nil {
			cur.Help = strings.TrimSpace(cur.Help + " " + strings.TrimSpace(l))
		}
	}
	if !seen {
		return nil, fmt.Errorf("%w: no llama.cpp option lines", ErrNotHelp)
	}
	for _, o := range t.Options {
		if m := llamaAllowedRe.FindStringSubmatch(o.Help); m != nil && o.Choices == nil {
			for _, c := range strings.Split(m[1], ",") {
				o.Choices = append(o.Choices, strings.TrimSpace(c))
			}
		}
	}
	return t, nil
}

// llamaAllowedRe is the list of values some options spell out in their help
// ("allowed values: f32, f16, bf16").
var llamaAllowedRe = regexp.MustCompile(`allowed values: ([\w.-]+(?:, [\w.-]+)*)`)

// llamaSep separates spellings: a comma and the padding after it.
var llamaSep = regexp.MustCompile(`,\s+`)

func llamaEntry(inv string) *Option {
	o := &Option{}
	metavar := ""
	for _, part := range llamaSep.Split(inv, -1) {
		if !strings.HasPrefix(part, "-") {
			metavar += ", " + part // a placeholder with ", " in it
			continue
		}
		name, mv, _ := strings.Cut(part, " ")
		o.Names = append(o.Names, name)
		if mv = strings.TrimSpace(mv); mv != "" {
			metavar = mv
		}
	}
	metavar = strings.TrimPrefix(metavar, ", ")
	switch {
	case metavar == "":
		o.Arity = NoValue
	case strings.HasPrefix(metavar, "[") && strings.HasSuffix(metavar, "]") && strings.Contains(metavar, "|"):
		o.Arity = OptionalValue
		o.Choices = strings.Split(metavar[1:len(metavar)-1], "|")
	case strings.HasPrefix(metavar, "{") && strings.HasSuffix(metavar, "}"):
		o.Arity = OneValue
		o.Choices = strings.Split(metavar[1:len(metavar)-1], ",")
	case strings.HasPrefix(metavar, "<") && strings.HasSuffix(metavar, ">") && strings.Contains(metavar, "|"):
		o.Arity = OneValue
		o.Choices = strings.Split(metavar[1:len(metavar)-1], "|")
	default:
		o.Arity = OneValue
	}
	return o
}
