package cmdline

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// How SGLang's parser converts a value before it checks the choices: the
// types argparse is given (int, float) and SGLang's own human_readable_int.
// A failure is worded as argparse words it, so that the sim's refusal reads
// like SGLang's. Other type functions of SGLang's (json.loads,
// json_list_type, nullable_str, the CUDA-graph parsers) are not run: any
// value passes them here, and a real server may still refuse it.

// convertValue checks v against the flag's type and returns it as argparse
// would hand it to the choices check: an int, a float, or the string.
func convertValue(typ, v string) (any, error) {
	switch typ {
	case "int":
		n, err := pyInt(v)
		if err != nil {
			return nil, fmt.Errorf("invalid int value: %s", pyStr(v))
		}
		return n, nil
	case "float":
		f, err := pyFloat(v)
		if err != nil {
			return nil, fmt.Errorf("invalid float value: %s", pyStr(v))
		}
		return f, nil
	case "human_readable_int":
		return humanReadableInt(v)
	}
	return v, nil
}

// pyIntPattern is what Python's int() takes from a string, after it strips
// whitespace: a sign, then decimal digits with single underscores between
// them.
var pyIntPattern = regexp.MustCompile(`^[+-]?[0-9](_?[0-9])*$`)

// pyInt is Python's int(s) for a decimal string.
func pyInt(s string) (int, error) {
	t := strings.TrimSpace(s)
	if !pyIntPattern.MatchString(t) {
		return 0, fmt.Errorf("not an int: %q", s)
	}
	return strconv.Atoi(strings.ReplaceAll(t, "_", ""))
}

// pyFloatPattern is Python's float() syntax for a finite number; inf and
// nan are checked by name.
var pyFloatPattern = regexp.MustCompile(`^[+-]?(([0-9](_?[0-9])*)?\.?[0-9](_?[0-9])*|[0-9](_?[0-9])*\.)([eE][+-]?[0-9](_?[0-9])*)?$`)

// pyFloat is Python's float(s): Go's ParseFloat also takes hex floats and
// underscores anywhere, which Python refuses.
func pyFloat(s string) (float64, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "inf", "infinity", "nan":
		return strconv.ParseFloat(t, 64)
	}
	if !pyFloatPattern.MatchString(t) {
		return 0, fmt.Errorf("not a float: %q", s)
	}
	return strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
}

// hrPattern is human_readable_int's: a number and an SI or IEC suffix.
var hrPattern = regexp.MustCompile(`^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)$`)

var (
	siMultiplier  = map[string]int64{"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
	iecMultiplier = map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
)

// humanReadableInt is SGLang's human_readable_int
// (python/sglang/srt/utils/common.py), the type of --context-length,
// --max-total-tokens, --max-prefill-tokens and --cuda-graph-prefill-max-context:
// "1k" is 1000, "1Ki" 1024, "25.6k" 25600; its errors are its
// ArgumentTypeError messages, which argparse prints as they are.
func humanReadableInt(v string) (int, error) {
	t := strings.TrimSpace(v)
	if m := hrPattern.FindStringSubmatch(t); m != nil {
		number, suffix := m[1], m[2]
		if mult, ok := iecMultiplier[suffix]; ok {
			if strings.Contains(number, ".") {
				whole, _, _ := strings.Cut(number, ".")
				return 0, fmt.Errorf("Decimals are not allowed with IEC suffixes like '%s'. Use an integer IEC value such as '%s%s', or an SI value such as '%s%s'.",
					suffix, strings.TrimLeft(whole, "0")+zeroIfEmpty(strings.TrimLeft(whole, "0")), suffix, number, suffix[:1])
			}
			n, err := strconv.ParseInt(number, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("Invalid integer value: '%s'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive.", t)
			}
			return int(n * mult), nil
		}
		r, ok := new(big.Rat).SetString(number)
		if !ok {
			return 0, fmt.Errorf("Invalid integer value: '%s'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive.", t)
		}
		r.Mul(r, new(big.Rat).SetInt64(siMultiplier[suffix]))
		return int(new(big.Int).Quo(r.Num(), r.Denom()).Int64()), nil
	}
	n, err := pyInt(t)
	if err != nil {
		return 0, fmt.Errorf("Invalid integer value: '%s'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive.", t)
	}
	return n, nil
}

func zeroIfEmpty(s string) string {
	if s == "" {
		return "0"
	}
	return ""
}

// pyStr is Python's repr of a str, as argparse quotes a value in its
// errors: single quotes unless the string holds one and no double quote.
func pyStr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// choiceRepr is a choice or value as argparse's "invalid choice" error
// writes it: repr of the converted value, so 3 for an int, '3' for a str.
func choiceRepr(v any) string {
	switch x := v.(type) {
	case string:
		return pyStr(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}
