package faults

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// corpusDir holds the broken campaign files (configs/) and the scenario
// files they name (scenarios/). Each config states its expected problems in
// `# want: FILE:LINE: TEXT` comments; FILE is relative to corpusDir, "."
// for the config itself, and LINE 0 marks a problem with the whole file.
var corpusDir = filepath.Join("..", "testdata", "bad")

// minCorpus is the least number of cases the suite promises.
const minCorpus = 30

type want struct {
	file string
	line int
	text string
}

var wantRE = regexp.MustCompile(`^# want: ([^:]+):(\d+): (.+)$`)

func readWants(t *testing.T, path string) []want {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ws []want
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := wantRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ws = append(ws, want{file: m[1], line: n, text: m[3]})
	}
	if len(ws) == 0 {
		t.Fatalf("%s has no `# want:` line", path)
	}
	return ws
}

// panicMarks are what a Go panic or a runtime fatal error print.
var panicMarks = []string{"panic:", "goroutine ", "fatal error:", "runtime error"}

// TestBadCorpus runs the real `bakeoff validate` on every broken file:
// exit 2, each expected problem reported at its file and line, and every
// line of the report (but the count at the end) starting with a position.
func TestBadCorpus(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join(corpusDir, "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) < minCorpus {
		t.Fatalf("the corpus has %d cases, want at least %d", len(configs), minCorpus)
	}
	for _, cfg := range configs {
		rel := filepath.Join("configs", filepath.Base(cfg))
		t.Run(strings.TrimSuffix(filepath.Base(cfg), ".yaml"), func(t *testing.T) {
			t.Parallel()
			ws := readWants(t, cfg)
			cmd := exec.Command(bakeoffBin, "validate", rel)
			cmd.Dir = corpusDir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("bakeoff validate %s: %v, want exit status 2\nstdout:\n%s\nstderr:\n%s", rel, err, &stdout, &stderr)
			}
			out := stderr.String()
			for _, p := range panicMarks {
				if strings.Contains(out+stdout.String(), p) {
					t.Fatalf("output holds %q:\n%s", p, out)
				}
			}
			checkPositions(t, out)
			for _, w := range ws {
				file := w.file
				if file == "." {
					file = rel
				}
				if !reported(out, file, w.line, w.text) {
					where := file
					if w.line > 0 {
						where += ":" + strconv.Itoa(w.line)
					}
					t.Errorf("no problem %q reported at %s; got:\n%s", w.text, where, out)
				}
			}
		})
	}
}

// summaryRE is validate's closing count line.
var summaryRE = regexp.MustCompile(`^bakeoff validate: \d+ problems?$`)

// positionRE is the start of one problem: a .yaml file, then optionally
// :line and :col.
var positionRE = regexp.MustCompile(`^[^:\s]+\.yaml(:\d+(:\d+)?)?: \S`)

// checkPositions fails unless every problem line names its file, the last
// line is the count, and at least one problem has a line number.
func checkPositions(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 || !summaryRE.MatchString(lines[len(lines)-1]) {
		t.Errorf("report does not end with the problem count:\n%s", out)
		return
	}
	for _, l := range lines[:len(lines)-1] {
		if !positionRE.MatchString(l) {
			t.Errorf("problem line without file position: %q", l)
		}
	}
}

// reported says whether out has a line for file (at line, unless 0)
// containing text.
func reported(out, file string, line int, text string) bool {
	for _, l := range strings.Split(out, "\n") {
		prefix := file + ":"
		if line > 0 {
			prefix = file + ":" + strconv.Itoa(line) + ":"
		}
		if strings.HasPrefix(l, prefix) && strings.Contains(l, text) {
			return true
		}
	}
	return false
}
