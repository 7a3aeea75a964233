package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
)

// Dir is the folder inside a run directory that WriteAll fills.
const Dir = "report"

// File names WriteAll writes besides the plots.
const (
	TextFile      = "verdict.txt"
	MarkdownFile  = "verdict.md"
	CSVFile       = "summary.csv"
	JSONFile      = "verdict.json"
	BenchstatFile = "benchstat.txt"
)

// WriteAll writes every report and plot into runDir/report/, each file
// atomically (a reader sees the old file or the new one, never half).
func WriteAll(runDir string, v *verdict.Verdict) error {
	dir := filepath.Join(runDir, Dir)
	files := map[string][]byte{}
	for name, render := range map[string]func(io.Writer, *verdict.Verdict) error{
		TextFile: Text, MarkdownFile: Markdown, CSVFile: CSV, JSONFile: JSON, BenchstatFile: Benchstat, HTMLFile: HTML,
	} {
		var buf bytes.Buffer
		if err := render(&buf, v); err != nil {
			return fmt.Errorf("report %s: %w", name, err)
		}
		files[name] = buf.Bytes()
	}
	if v.Capacity != nil {
		var buf bytes.Buffer
		if err := CapacityCSV(&buf, v); err != nil {
			return fmt.Errorf("report %s: %w", CapacityFile, err)
		}
		files[CapacityFile] = buf.Bytes()
	}
	plots, err := Plots(v)
	if err != nil {
		return err
	}
	for name, data := range plots {
		files[name] = data
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := results.WriteFileAtomic(filepath.Join(dir, n), files[n]); err != nil {
			return err
		}
	}
	return nil
}
