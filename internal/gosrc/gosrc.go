// Package gosrc reads what the layers tests hold packages to: the imports
// of a package's non-test files, and how many lines of code they have.
package gosrc

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Imports are the import paths of the non-test .go files in dir, and
// their lines. An error when dir holds no code: a test that reads the
// wrong folder must not pass by seeing nothing.
func Imports(dir string) (imports []string, lines int, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, 0, err
		}
		lines += bytes.Count(b, []byte("\n"))
		f, err := parser.ParseFile(token.NewFileSet(), path, b, parser.ImportsOnly)
		if err != nil {
			return nil, 0, err
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: import %s: %w", path, is.Path.Value, err)
			}
			imports = append(imports, p)
		}
	}
	if lines == 0 {
		return nil, 0, fmt.Errorf("%s: no Go code: the test no longer looks where the packages are", dir)
	}
	return imports, lines, nil
}
