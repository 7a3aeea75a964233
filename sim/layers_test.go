package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/gosrc"
)

// simLayers are the sim's rooms from the bottom up. A room imports only
// rooms of a lower layer: the GPU knows nothing of SGLang, the command line
// nothing of what a server does with it, the model serves nothing, and the
// router, like the real one, reaches a worker over HTTP alone: it stands
// beside the model, and below the server it routes to.
var simLayers = map[string]int{
	"sim/gpu":     0,
	"sim/cmdline": 1,
	"sim/sglog":   2,
	"sim/model":   3,
	"sim/server":  4,
	"sim/router":  3,
	"sim":         5,
}

// maxRoomLines bounds a room's non-test code: a room past it holds more
// than one idea again.
const maxRoomLines = 2500

// TestLayers holds the sim's packages to their order and size.
func TestLayers(t *testing.T) {
	const mod = "github.com/bakeoff-dev/bakeoff/"
	for room, layer := range simLayers {
		imps, lines, err := gosrc.Imports(filepath.Join("..", room))
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range imps {
			rel, ok := strings.CutPrefix(imp, mod)
			if !ok || !strings.HasPrefix(rel, "sim") {
				continue
			}
			l, known := simLayers[rel]
			switch {
			case strings.HasPrefix(rel, "sim/internal/"):
				t.Errorf("%s imports %s, which is for tests", room, rel)
			case !known:
				t.Errorf("%s imports %s, which has no layer here: give it one", room, rel)
			case l >= layer:
				t.Errorf("%s (layer %d) imports %s (layer %d): an arrow up or sideways", room, layer, rel, l)
			}
		}
		if lines > maxRoomLines {
			t.Errorf("%s has %d lines of code, over %d: split it", room, lines, maxRoomLines)
		}
	}
	// Every package under sim/ must have a layer, or it escapes the test.
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		rel := "sim/" + filepath.ToSlash(path)
		if strings.Contains(rel, "testdata") || strings.HasPrefix(rel, "sim/internal") {
			return nil
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 {
			if _, ok := simLayers[rel]; !ok {
				t.Errorf("%s has no layer in simLayers", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
