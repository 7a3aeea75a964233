package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bakeoff-dev/bakeoff/measure"
)

// Run is a run directory read back from disk.
type Run struct {
	Dir      string
	Manifest Manifest
	Summary  Summary
}

// ReadRun reads manifest.json and summary.json of a run directory. A run
// that has a manifest but no summary yet (killed before its first scenario
// ended) reads as a summary with no scenarios. A summary written before
// attempts were tracked gets each scenario's earlier attempts from the
// result.json files under its history/.
func ReadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	if err := readJSON(filepath.Join(dir, ManifestFile), &r.Manifest); err != nil {
		return nil, err
	}
	err := readJSON(filepath.Join(dir, SummaryFile), &r.Summary)
	if errors.Is(err, os.ErrNotExist) {
		r.Summary = Summary{Campaign: r.Manifest.Campaign, Run: r.Manifest.Run,
			Fingerprint: r.Manifest.Fingerprint, Baseline: r.Manifest.Baseline}
	} else if err != nil {
		return nil, err
	}
	if err := r.fillHistory(); err != nil {
		return nil, fmt.Errorf("reading the earlier attempts in %s: %w", dir, err)
	}
	return r, nil
}

// Records reads the requests.jsonl of the attempt the figures of the
// scenario's earliest round come from (ScenarioDir). LaunchRecords reads
// any round's.
func (r *Run) Records(name string) ([]measure.Record, error) {
	return ReadRecords(filepath.Join(r.ScenarioDir(name), RequestsFile))
}

// ReadRecords reads a requests.jsonl file. A torn last line (the writer was
// killed mid-write) is dropped; any other bad line is an error naming the
// file and line.
func ReadRecords(path string) ([]measure.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	defer f.Close()
	return DecodeRecords(f, path)
}

// DecodeRecords decodes JSON lines from rd; name is used in error messages.
// Only a last line without its newline can be torn (the writer appends a
// whole line per write and was killed mid-write), so only that one is
// dropped when it does not decode; a bad complete line is an error naming
// the file and line, since appending after it would bury it.
func DecodeRecords(rd io.Reader, name string) ([]measure.Record, error) {
	br := bufio.NewReaderSize(rd, 64*1024)
	var out []measure.Record
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		complete := err == nil
		if len(bytes.TrimSpace(b)) > 0 {
			var rec measure.Record
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				if !complete {
					break // torn by a crash mid-write
				}
				return nil, fmt.Errorf("%s:%d: bad record: %w", name, line, jerr)
			}
			out = append(out, rec)
		}
		if !complete {
			break
		}
	}
	return out, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// UnreadableError is a run of a history (a diff's, bakeoff history's)
// that cannot be read: a manifest, summary or records file that does not
// decode.
type UnreadableError struct {
	Run string
	Err error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("the run %s of the history cannot be read: %v", e.Run, e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }
