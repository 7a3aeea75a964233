package engine

import (
	"slices"
	"testing"
)

// TestHelpCalls: every engine with a launcher of its own says how the
// preflight asks it for its flags, in a format package preflight reads;
// generic has none (engine.help gives it).
func TestHelpCalls(t *testing.T) {
	for _, name := range Names() {
		p := Lookup(name)
		switch {
		case len(p.Launcher) == 0 && p.Help != nil:
			t.Errorf("%s: a help call without a launcher to put it after", name)
		case len(p.Launcher) > 0 && (p.Help == nil || len(p.Help.Args) == 0 || !slices.Contains(HelpFormats, p.Help.Format)):
			t.Errorf("%s: help call %+v", name, p.Help)
		}
	}
}
