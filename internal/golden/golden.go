// Package golden compares a test's output with a file kept in testdata/,
// benchstat's way: `go test -update` rewrites the files, and on a mismatch
// the test writes what it got beside the golden file (NAME.got), so that the
// two can be diffed and the new one copied over if it is right.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// update is the one -update flag of every test binary that compares golden
// files: each package declaring its own made two packages' flags collide as
// soon as one test imported the other's helpers.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the tests get")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path (relative to the test's
// package, "testdata/NAME"). With -update it writes got there instead,
// creating the directory. On a mismatch it writes got to path+".got" and
// fails the test, naming the first line that differs.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(path + ".got")
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		_ = os.Remove(path + ".got") // an earlier mismatch's leftover would mislead
		return
	}
	where := path + ".got"
	if err := os.WriteFile(where, got, 0o644); err != nil {
		where = fmt.Sprintf("(could not write %s.got: %v)", path, err)
	}
	t.Errorf("%s differs from the golden file; got written to %s\n%s", path, where, FirstDifference(want, got))
}

// FirstDifference describes the first line at which got differs from want:
// its number and both versions.
func FirstDifference(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if i >= len(wl) || i >= len(gl) || !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\nwant: %s\n got: %s", i+1, w, g)
		}
	}
	return "the files differ"
}
