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

// TestOnlyFonts starts the browser with one monospaced font and nothing
// else: a page asking for Liberation Sans then lays "iiiiiiiiii" out as
// wide as "MMMMMMMMMM", which no proportional font does, so the browser
// really saw only that font, and the report's test of text that must fit
// without its font tests what it says.
func TestOnlyFonts(t *testing.T) {
	path, err := Find()
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	mono, err := FindFont("liberation", "mono.ttf", "mono")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	env, err := OnlyFonts(t.TempDir(), mono)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, path, WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fonts.html")
	page := `<!DOCTYPE html><title>t</title><p style="font: 20px 'Liberation Sans', Arial, sans-serif">` +
		`<span id="i">iiiiiiiiii</span><br><span id="m">MMMMMMMMMM</span>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(ctx, "file://"+file); err != nil {
		t.Fatal(err)
	}
	var w struct{ I, M float64 }
	if err := p.Eval(ctx, `({I: document.getElementById('i').getBoundingClientRect().width, M: document.getElementById('m').getBoundingClientRect().width})`, &w); err != nil {
		t.Fatal(err)
	}
	if w.I <= 0 || w.M-w.I > 1 {
		t.Errorf("with only %s, ten i are %.1f px and ten M %.1f px: the browser used another font", filepath.Base(mono), w.I, w.M)
	}
}
