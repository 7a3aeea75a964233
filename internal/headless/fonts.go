package headless

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// fontDirs are where Linux distributions install fonts.
var fontDirs = []string{"/usr/share/fonts", "/usr/local/share/fonts"}

// ErrNoFont is returned by FindFont when no font file qualifies.
var ErrNoFont = errors.New("no font file under " + strings.Join(fontDirs, " or "))

// FindFont returns the path of an installed TrueType or OpenType font
// whose file name does not contain avoid (case-insensitive): the first, in
// path order, whose name contains prefer[0], else prefer[1], and so on,
// else the first of any.
func FindFont(avoid string, prefer ...string) (string, error) {
	avoid = strings.ToLower(avoid)
	var all []string
	for _, d := range fontDirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil // an unreadable folder is one fewer place to look
			}
			name := strings.ToLower(e.Name())
			if ext := filepath.Ext(name); ext != ".ttf" && ext != ".otf" {
				return nil
			}
			if avoid == "" || !strings.Contains(name, avoid) {
				all = append(all, p)
			}
			return nil
		})
	}
	if len(all) == 0 {
		return "", ErrNoFont
	}
	slices.Sort(all)
	for _, want := range prefer {
		for _, p := range all {
			if strings.Contains(strings.ToLower(filepath.Base(p)), strings.ToLower(want)) {
				return p, nil
			}
		}
	}
	return all[0], nil
}

// OnlyFonts writes into dir a FontConfig configuration that offers the
// browser the given font files and nothing else, and returns the variable
// that makes a browser use it (for WithEnv): every family a page asks for
// then falls back to one of these, which is how a page is seen on a
// machine without the fonts it names.
func OnlyFonts(dir string, files ...string) (string, error) {
	fonts := filepath.Join(dir, "fonts")
	if err := os.MkdirAll(fonts, 0o755); err != nil {
		return "", fmt.Errorf("writing a font configuration: %w", err)
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", fmt.Errorf("writing a font configuration: %w", err)
		}
		if err := os.Symlink(abs, filepath.Join(fonts, filepath.Base(f))); err != nil {
			return "", fmt.Errorf("writing a font configuration: %w", err)
		}
	}
	conf := filepath.Join(dir, "fonts.conf")
	body := fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>%s</cachedir>
</fontconfig>
`, html.EscapeString(fonts), html.EscapeString(filepath.Join(dir, "cache")))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return "", fmt.Errorf("writing a font configuration: %w", err)
	}
	return "FONTCONFIG_FILE=" + conf, nil
}
