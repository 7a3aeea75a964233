package orchestrator_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPartNamesAreUnique: make test runs the tests ORCH_PART and
// VERDICT_PART name as test binaries of their own and skips them by name in
// the run of every other package, so each must be a test of its package and
// of no other (a test of that name elsewhere would never run), and must
// exist (a name that no longer does would leave its test running twice).
func TestPartNamesAreUnique(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
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
	for _, part := range []struct{ name, dir string }{{"ORCH_PART", "../orchestrator"}, {"VERDICT_PART", "../verdict"}} {
		m := regexp.MustCompile(`(?m)^` + part.name + ` := \^\(([A-Za-z0-9_|]+)\)\$\$$`).FindSubmatch(mk)
		if m == nil {
			t.Errorf("the Makefile has no %s := ^(TestA|TestB)$$ line", part.name)
			continue
		}
		for _, name := range strings.Split(string(m[1]), "|") {
			files := defined[name]
			if len(files) != 1 || filepath.Dir(files[0]) != part.dir {
				t.Errorf("%s names %s, defined in %v: want one test of %s", part.name, name, files, part.dir)
			}
		}
	}
}
