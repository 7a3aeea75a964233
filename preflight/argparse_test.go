package preflight

import (
	"slices"
	"testing"
)

// TestArgparseMetavar: argparse's own rendering of choices= (braces, with
// nargs' repetitions and brackets) is a closed set; braces a program wrote
// in a metavar of its own, with more words beside them, are not, nor is a
// metavar given as a Python list.
func TestArgparseMetavar(t *testing.T) {
	ab := []string{"a", "b"}
	tests := []struct {
		mv      string
		arity   Arity
		choices []string
		open    string
	}{
		{"", NoValue, nil, ""},
		{"TP_SIZE", OneValue, nil, ""},
		{"{a,b}", OneValue, ab, ""},
		{"[{a,b}]", OptionalValue, ab, ""},
		{"{a,b} [{a,b} ...]", ManyValues, ab, ""},
		{"[{a,b} ...]", ManyValues, ab, ""},
		{"{a,b} {a,b}", OneValue, ab, ""}, // nargs=2
		{"{a,b} or name registered in --tool-parser-plugin", OneValue, ab, `its help adds "or name registered in --tool-parser-plugin"`},
		{"{a,b}|PATH", OneValue, ab, `its help adds "|PATH"`},
		{"['a', 'b']", OneValue, ab, "its help lists them as a metavar (a Python list), which argparse does not check"},
		{"[A]", OptionalValue, nil, ""},
	}
	for _, tt := range tests {
		arity, choices, open := argparseMetavar(tt.mv)
		if arity != tt.arity || !slices.Equal(choices, tt.choices) || open != tt.open {
			t.Errorf("argparseMetavar(%q) = %v, %q, %q; want %v, %q, %q", tt.mv, arity, choices, open, tt.arity, tt.choices, tt.open)
		}
	}
}
