package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps its failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, strings.TrimSpace(format))
}

func TestCheck(t *testing.T) {
	if Updating() {
		t.Skip("under -update Check writes instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "testdata", "table.txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		got     string
		fails   bool
		gotFile bool
	}{
		{"equal", "a\nb\n", false, false},
		{"differs", "a\nc\n", true, true},
		{"equal again removes the leftover", "a\nb\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Check(r, path, []byte(tc.got))
			if (len(r.errors) > 0) != tc.fails {
				t.Errorf("failures %q, want failing %v", r.errors, tc.fails)
			}
			data, err := os.ReadFile(path + ".got")
			if tc.gotFile != (err == nil) || (tc.gotFile && string(data) != tc.got) {
				t.Errorf("%s.got: %q, %v; want it written: %v", path, data, err, tc.gotFile)
			}
		})
	}
}

func TestFirstDifference(t *testing.T) {
	for _, tc := range []struct{ want, got, says string }{
		{"a\nb\n", "a\nc\n", "line 2:\nwant: b\n got: c"},
		{"a\n", "a\nextra\n", "line 2:\nwant: \n got: extra"},
	} {
		if s := FirstDifference([]byte(tc.want), []byte(tc.got)); s != tc.says {
			t.Errorf("FirstDifference(%q, %q) = %q, want %q", tc.want, tc.got, s, tc.says)
		}
	}
}
