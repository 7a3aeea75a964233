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

// Options are the choices a renderer leaves to its caller. The zero value
// means the defaults; WriteAll writes the detail.
type Options struct {
	// Width is the widest line the text table may draw, in columns: a
	// terminal's width (DefaultWidth when zero). A file has no terminal and
	// gets DefaultWidth.
	Width int
	// Detail asks the text format for everything: the notes in full, each
	// level's figures, categories, energy and accept lengths (Text). Without
	// it the text format is what the end of a run shows (End). The report
	// files always hold the detail.
	Detail bool
	// Where is what End says about the run's files; the detail has no use
	// for it.
	Where Where
}

// Format is one way to write a verdict: what `bakeoff report --format`
// names it, the file WriteAll writes it to, and its renderer.
type Format struct {
	Name string
	// Doc says what it is, for the command's usage.
	Doc   string
	File  string
	Write func(w io.Writer, v *verdict.Verdict, o Options) error
}

// Formats are every format, the one list that both WriteAll and
// `bakeoff report --format` read, in the order the usage lists them.
var Formats = []Format{
	{Name: "text", Doc: "the checks, the table and the sentences; with --detail every note and each level's figures", File: TextFile,
		Write: func(w io.Writer, v *verdict.Verdict, o Options) error {
			if o.Detail {
				return TextWidth(w, v, o.Width)
			}
			return End(w, v, o.Width, o.Where)
		}},
	{Name: "md", Doc: "the same as Markdown, for a pull request or a chat", File: MarkdownFile, Write: plain(Markdown)},
	{Name: "csv", Doc: "one row per scenario and level", File: CSVFile, Write: plain(CSV)},
	{Name: "breakeven", Doc: "one row per variant: where its speedup crosses 1, with the interval and the setting it suggests", File: BreakEvenFile, Write: plain(BreakEvenCSV)},
	{Name: "json", Doc: "the whole verdict", File: JSONFile, Write: plain(JSON)},
	{Name: "benchstat", Doc: "Go benchmark format: benchstat -col /scenario DIR/report/benchstat.txt", File: BenchstatFile, Write: plain(Benchstat)},
	{Name: "html", Doc: "the one-page report, as report/index.html", File: HTMLFile, Write: plain(HTML)},
}

// plain adapts a renderer that has no choice to make.
func plain(f func(io.Writer, *verdict.Verdict) error) func(io.Writer, *verdict.Verdict, Options) error {
	return func(w io.Writer, v *verdict.Verdict, _ Options) error { return f(w, v) }
}

// FormatNames are the names of Formats, in order.
func FormatNames() []string {
	out := make([]string, len(Formats))
	for i, f := range Formats {
		out[i] = f.Name
	}
	return out
}

// FormatNamed is the format called name; ok is false when there is none.
func FormatNamed(name string) (f Format, ok bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// WriteAll writes every report and plot into runDir/report/, each file
// atomically (a reader sees the old file or the new one, never half).
func WriteAll(runDir string, v *verdict.Verdict) error {
	dir := filepath.Join(runDir, Dir)
	files := map[string][]byte{}
	for _, f := range Formats {
		var buf bytes.Buffer
		if err := f.Write(&buf, v, Options{Detail: true}); err != nil {
			return fmt.Errorf("report %s: %w", f.File, err)
		}
		files[f.File] = buf.Bytes()
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
	cdfs, err := CDFPlots(v)
	if err != nil {
		return err
	}
	for name, data := range cdfs {
		files[name] = data
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := results.WriteFileAtomic(filepath.Join(dir, n), files[n]); err != nil {
			return err
		}
	}
	return nil
}
