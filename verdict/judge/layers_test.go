package judge

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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
		"verdict/rule":    {"verdict", "verdict/records", "verdict/explain", "verdict/notes", "verdict/judge", "results", "measure", "report"},
		"verdict/records": {"verdict", "verdict/explain", "verdict/notes", "verdict/judge", "report"},
		"verdict":         {"verdict/explain", "verdict/notes", "verdict/judge", "report", "engine"},
		"verdict/explain": {"verdict/notes", "verdict/judge", "report"},
		"verdict/notes":   {"verdict/explain", "verdict/judge", "report"},
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
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no imports read: the test no longer looks where the packages are", dir)
	}
	return out
}
