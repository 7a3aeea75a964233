package preflight

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Severity says whether a finding stops the campaign.
type Severity int

const (
	// Error: the engine refuses the command line; nothing is launched.
	Error Severity = iota
	// Warning: the engine takes it, but says or implies it should change.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Kind says what a finding is about.
type Kind string

// Kinds of finding.
const (
	Unknown     Kind = "unknown"     // no option of that spelling
	Ambiguous   Kind = "ambiguous"   // a prefix of several options (argparse)
	Abbreviated Kind = "abbreviated" // a unique prefix argparse takes for the option
	Removed     Kind = "removed"     // refused, with the replacement the help or the engine's source names
	BadChoice   Kind = "bad-choice"  // a value outside the listed choices
	NoValueKind Kind = "takes-no-value"
	NeedsValue  Kind = "needs-value"
	Stray       Kind = "stray-value" // a word no option takes
	Deprecated  Kind = "deprecated"  // a deprecated alias: it works, for now
	GPU         Kind = "gpu"         // a setting the host's GPUs cannot run
)

// Finding is one thing the engine would say about a command line.
type Finding struct {
	Severity Severity
	Kind     Kind
	// Word is the index, in the words checked, of the flag (or stray
	// value) the finding is about.
	Word int
	// Flag is the flag as written ("--cuda-graph-max-bs").
	Flag string
	// Text says what is wrong, in a sentence without the flag's position.
	Text string
	// Suggest is the spelling to write instead: the closest accepted one,
	// or the replacement the help names; empty when there is none.
	Suggest string
}

// Check reads words, a scenario's flags as the launch renders them
// (["--tp", "8", "--trust-remote-code", …]), as the engine's parser would,
// and returns what it would refuse (Error) or warn about (Warning), in the
// order of the words.
func (t *Table) Check(words []string) []Finding {
	var out []Finding
	for i := 0; i < len(words); {
		w := words[i]
		if !isFlag(w) {
			out = append(out, Finding{Severity: Error, Kind: Stray, Word: i, Flag: w,
				Text: fmt.Sprintf("%q follows no flag that takes a value (the engine's parser refuses it as an unrecognized argument)", w)})
			i++
			continue
		}
		name, inline, hasInline := w, "", false
		if strings.HasPrefix(w, "--") && t.InlineValues {
			if k, v, ok := strings.Cut(w, "="); ok {
				name, inline, hasInline = k, v, true
			}
		}
		o, fs := t.resolve(i, name)
		out = append(out, fs...)
		// The option's values: an inline one, or the words up to the next flag.
		var values []string
		next := i + 1
		switch {
		case hasInline:
			values = []string{inline}
		case o == nil || o.Arity == ManyValues || o.Removed:
			for next < len(words) && !isFlag(words[next]) {
				values = append(values, words[next])
				next++
			}
		case o.Arity == OneValue, o.Arity == NoValue:
			// A flag followed by a word: the word is what the scenario
			// meant as its value (`true`, `1`), said as such below.
			if next < len(words) && !isFlag(words[next]) {
				values = []string{words[next]}
				next++
			}
		case o.Arity == OptionalValue:
			if next < len(words) && !isFlag(words[next]) {
				values = []string{words[next]}
				next++
			}
		}
		if o != nil && !o.Removed {
			out = append(out, t.checkValues(i, name, o, values, hasInline)...)
		}
		i = next
	}
	return out
}

// resolve finds the option a flag names, as the engine's parser would:
// with '_' as '-' where it takes that (vLLM, llama.cpp), exactly, then
// (argparse) by a unique prefix.
func (t *Table) resolve(i int, name string) (*Option, []Finding) {
	lookup := name
	if t.JSONKeys && strings.HasPrefix(name, "--") {
		// "--json-arg.key" and "--list+" set parts of an option.
		lookup = strings.TrimSuffix(strings.SplitN(lookup, ".", 2)[0], "+")
	}
	if t.Underscores && strings.HasPrefix(lookup, "--") {
		lookup = "--" + strings.ReplaceAll(lookup[2:], "_", "-")
	}
	if o := t.Lookup(lookup); o != nil {
		return o, t.standing(i, name, o)
	}
	if t.Abbrev && strings.HasPrefix(lookup, "--") {
		switch p := t.prefixed(lookup); len(p) {
		case 0:
		case 1:
			// What the engine does with it (SGLang's own docs write --tp
			// for --tp-size). A build that adds an option with the same
			// prefix makes it ambiguous, which the preflight of that
			// build then says.
			o := t.Lookup(p[0])
			return o, t.standing(i, name, o)
		default:
			return nil, []Finding{{Severity: Error, Kind: Ambiguous, Word: i, Flag: name, Suggest: closest(name, p),
				Text: fmt.Sprintf("ambiguous option: %s could match %s", name, strings.Join(p, ", "))}}
		}
	}
	f := Finding{Severity: Error, Kind: Unknown, Word: i, Flag: name, Text: "unknown flag " + name}
	// What the engine says replaced it comes before the nearest spelling,
	// which for a removed flag is another option altogether.
	if s, why := t.replacementOf(lookup); s != "" {
		f.Kind, f.Suggest = Removed, s
		f.Text += ": " + why
		return nil, []Finding{f}
	}
	if s := closest(lookup, t.Names()); s != "" {
		f.Suggest = s
		f.Text += "; the closest it accepts is " + s
	}
	return nil, []Finding{f}
}

// standing is what the help says of an option the flag resolved to:
// removed, or deprecated.
func (t *Table) standing(i int, name string, o *Option) []Finding {
	var f Finding
	switch {
	case o.Removed:
		f = Finding{Severity: Error, Kind: Removed, Text: name + " has been removed"}
	case o.Deprecated:
		f = Finding{Severity: Warning, Kind: Deprecated, Text: name + " is deprecated"}
	default:
		return nil
	}
	f.Word, f.Flag, f.Suggest = i, name, firstFlag(o.Replacement)
	if o.Replacement != "" {
		f.Text += "; use " + o.Replacement
	}
	return []Finding{f}
}

// checkValues compares the values a flag got with what its option takes.
func (t *Table) checkValues(i int, name string, o *Option, values []string, inline bool) []Finding {
	switch {
	case o.Arity == NoValue && len(values) > 0:
		how := fmt.Sprintf("but %q follows it", values[0])
		if inline {
			how = fmt.Sprintf("but is given %q", values[0])
		}
		return []Finding{{Severity: Error, Kind: NoValueKind, Word: i, Flag: name,
			Text: fmt.Sprintf("%s takes no value, %s (a flag: write true for it in the scenario)", name, how)}}
	case o.Arity == OneValue && len(values) == 0:
		return []Finding{{Severity: Error, Kind: NeedsValue, Word: i, Flag: name,
			Text: name + " expects a value"}}
	}
	if o.Choices == nil {
		return nil
	}
	var out []Finding
	for _, v := range values {
		if !slices.Contains(o.Choices, v) {
			out = append(out, t.badChoice(i, name, o, v))
		}
	}
	return out
}

// badChoice is a value outside an option's listed choices: an error where
// the engine's parser refuses it, a warning where the parser takes values
// its help does not list (click's Choice subclasses; a metavar that says
// so, as vLLM's --tool-call-parser's, see openChoices). A valid flag
// refused would stop the campaign for nothing; the warning still names the
// closest listed value, since a typo there fails only once the engine runs.
func (t *Table) badChoice(i int, name string, o *Option, v string) Finding {
	f := Finding{Severity: Error, Kind: BadChoice, Word: i, Flag: name, Suggest: closest(v, o.Choices)}
	lead, closestIs, note := fmt.Sprintf("invalid choice for %s: %q", name, v), "the closest it accepts is ", ""
	switch {
	case o.OpenChoices != "":
		f.Severity = Warning
		lead, closestIs = fmt.Sprintf("%q is not among the values the help lists for %s", v, name), "the closest listed is "
		note = "; it may take others: " + o.OpenChoices
	case !t.StrictChoices:
		f.Severity, note = Warning, "; its help may not list every value it takes"
	}
	f.Text = lead
	if f.Suggest != "" {
		f.Text += "; " + closestIs + f.Suggest
	}
	f.Text += " (" + choiceList(o.Choices) + ")" + note
	return f
}

// maxChoicesShown is how many of an option's choices a finding lists; a
// longer list (SGLang's 25 attention backends) is cut, the help has it.
const maxChoicesShown = 10

// choiceList says what an option takes: "choose from a, b, c", or the first
// maxChoicesShown of a long list and how many there are.
func choiceList(choices []string) string {
	if len(choices) <= maxChoicesShown {
		return "choose from " + strings.Join(choices, ", ")
	}
	return fmt.Sprintf("choose from %s, … (%d in all)", strings.Join(choices[:maxChoicesShown], ", "), len(choices))
}

// isFlag reports whether a word is an option rather than a value: it starts
// with '-' and is not a negative number (argparse's rule, when no option
// looks like a number).
func isFlag(w string) bool {
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(w, 64)
	return err != nil
}
