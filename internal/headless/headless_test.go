package headless

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func browser(t *testing.T) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the browser tests must run in CI: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// TestErrorsAreSeen loads pages that log a console error, throw, and fail
// to load an image, and one that does none of it: the first three must be
// reported, the last must not, or the report's browser test proves nothing.
func TestErrorsAreSeen(t *testing.T) {
	b := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"clean", `<p id="x">fine</p>`, ""},
		{"console", `<script>console.error("boom " + 42)</script>`, "console.error: boom 42"},
		{"throw", `<script>throw new Error("thrown here")</script>`, "thrown here"},
		{"missing", `<img src="no-such-file.png">`, "no-such-file.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(file, []byte("<!DOCTYPE html><title>t</title>"+tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := b.NewPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Navigate(ctx, "file://"+file); err != nil {
				t.Fatal(err)
			}
			var title string
			if err := p.Eval(ctx, "document.title", &title); err != nil || title != "t" {
				t.Fatalf("document.title = %q, %v", title, err)
			}
			errs := strings.Join(p.Errors(), "\n")
			switch {
			case tc.want == "" && errs != "":
				t.Errorf("errors on a clean page: %s", errs)
			case tc.want != "" && !strings.Contains(errs, tc.want):
				t.Errorf("errors %q, want one with %q", errs, tc.want)
			}
		})
	}
}
