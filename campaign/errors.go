package campaign

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a campaign or scenario file. Line and Col are
// 1-based; 0 means unknown (the problem is about the file as a whole).
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error formats the problem as file:line:col: msg, leaving out a line or
// column that is unknown.
func (e *Error) Error() string {
	return position{e.File, e.Line, e.Col}.String() + ": " + e.Msg
}

// Errors is every problem found while loading, in file order and then by
// position, so a user can fix them all in one pass.
type Errors struct {
	List []*Error
}

// Error joins the problems, one per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, x := range e.List {
		lines[i] = x.Error()
	}
	return strings.Join(lines, "\n")
}

// position is a place in a file; line and col 0 mean unknown.
type position struct {
	file      string
	line, col int
}

func (p position) String() string {
	switch {
	case p.line <= 0:
		return p.file
	case p.col <= 0:
		return fmt.Sprintf("%s:%d", p.file, p.line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.file, p.line, p.col)
	}
}

// problems collects errors and warnings across every file of one load.
type problems struct {
	errs     []*Error
	warnings []*Error
	// fileOrder numbers files in the order they were first read, so output
	// follows the campaign rather than the alphabet.
	fileOrder map[string]int
}

func newProblems() *problems {
	return &problems{fileOrder: map[string]int{}}
}

func (p *problems) seeFile(file string) {
	if _, ok := p.fileOrder[file]; !ok {
		p.fileOrder[file] = len(p.fileOrder)
	}
}

func (p *problems) errorf(at position, format string, args ...any) {
	p.seeFile(at.file)
	p.errs = append(p.errs, &Error{File: at.file, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) warnf(at position, format string, args ...any) {
	p.seeFile(at.file)
	p.warnings = append(p.warnings, &Error{File: at.file, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)})
}

// sorted orders a list by file (first read first), line and column, and
// drops exact duplicates (a parent file shared by two scenarios is read once,
// but a check on it may still be reached twice).
func (p *problems) sorted(list []*Error) []*Error {
	out := append([]*Error(nil), list...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if fa, fb := p.fileOrder[a.File], p.fileOrder[b.File]; fa != fb {
			return fa < fb
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	seen := map[Error]bool{}
	n := 0
	for _, e := range out {
		if seen[*e] {
			continue
		}
		seen[*e] = true
		out[n] = e
		n++
	}
	return out[:n]
}

// err returns the collected errors as *Errors, or nil when there are none.
func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return &Errors{List: p.sorted(p.errs)}
}

func (p *problems) warningStrings() []string {
	var out []string
	for _, w := range p.sorted(p.warnings) {
		out = append(out, w.Error())
	}
	return out
}
