package orchestrator_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOrchPartNamesAreUnique: make test runs the tests ORCH_PART names as
// a test binary of their own and skips them by name in the run of every
// other package, so each must be a test of this package and of no other
// (a test of that name elsewhere would never run), and must exist (a name
// that no longer does would leave its test running twice).
func TestOrchPartNamesAreUnique(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ORCH_PART := \^\(([A-Za-z0-9_|]+)\)\$\$$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no ORCH_PART := ^(TestA|TestB)$$ line")
	}
	defined := map[string][]string{} // test name → files that define it
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllSubmatch(src, -1) {
			defined[string(f[1])] = append(defined[string(f[1])], filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(string(m[1]), "|") {
		files := defined[name]
		if len(files) != 1 || filepath.Dir(files[0]) != "../orchestrator" {
			t.Errorf("ORCH_PART names %s, defined in %v: want one test of package orchestrator", name, files)
		}
	}
}
