package judge

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/gosrc"
)

// TestLayers holds the verdict's packages to their order: the rule
// (verdict, verdict/rule) below the explanations and the notes, which
// stand side by side, each reading the decided verdict, and judge above
// all. A note that imported the explanations, or an explanation the notes,
// would tie two ideas together again; the rule cannot import either
// (Go refuses the cycle), but verdict/rule must stay numbers alone.
func TestLayers(t *testing.T) {
	const mod = "github.com/bakeoff-dev/bakeoff/"
	forbidden := map[string][]string{
		"verdict/rule": {"verdict", "verdict/records", "verdict/explain", "verdict/notes", "verdict/judge", "results", "measure", "report"},
		// The race is numbers alone too: the verdict holds its result,
		// and judge feeds it the launches.
		"verdict/selection": {"verdict", "verdict/records", "verdict/explain", "verdict/notes", "verdict/judge", "results", "measure", "report"},
		"verdict/records":   {"verdict", "verdict/explain", "verdict/notes", "verdict/judge", "report"},
		"verdict":           {"verdict/explain", "verdict/notes", "verdict/judge", "report", "engine"},
		"verdict/explain":   {"verdict/notes", "verdict/judge", "report"},
		"verdict/notes":     {"verdict/explain", "verdict/judge", "report"},
	}
	for dir, bad := range forbidden {
		for _, imp := range imports(t, filepath.Join("..", "..", dir)) {
			if rel, ok := strings.CutPrefix(imp, mod); ok && slices.Contains(bad, rel) {
				t.Errorf("%s imports %s", dir, rel)
			}
		}
	}
}

// imports are the packages the non-test files of dir import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	imps, _, err := gosrc.Imports(dir)
	if err != nil {
		t.Fatal(err)
	}
	return imps
}
