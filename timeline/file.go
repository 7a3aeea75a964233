package timeline

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// File is the timeline's name in a launch's metrics folder.
const File = "timeline.jsonl"

// The file is JSON lines of two kinds (docs/RESULTS.md):
//
//	{"series":3,"name":"sglang:num_running_reqs","labels":{"model_name":"m"},"type":"gauge"}
//	{"t":1767225600123456789,"v":{"3":5,"7":1204}}
//
// A series line gives a series its number before its first value. A scrape
// line is one scrape: its time (Unix ns) and the values that changed since
// the scrape before, every value in the first scrape; "gone" lists series the
// scrape no longer carried. A series keeps its value through the scrapes that
// do not name it, so the file holds every scrape exactly while writing a value
// only when it changes. Close writes the last scrape again in full, marked
// "end", so the file ends with every series' last value and says it is whole.
type line struct {
	Series *int              `json:"series,omitempty"`
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Type   string            `json:"type,omitempty"`
	T      int64             `json:"t,omitempty"`
	V      map[int]num       `json:"v,omitempty"`
	Gone   []int             `json:"gone,omitempty"`
	End    bool              `json:"end,omitempty"`
}

// num is a sample value: a JSON number, or "NaN", "+Inf", "-Inf", which
// JSON numbers cannot be.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (n *num) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		*n = num(f)
		return err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = num(f)
	return err
}

// Writer writes scrapes to a timeline file, deduplicated.
type Writer struct {
	w     *bufio.Writer
	enc   *json.Encoder
	ids   map[string]int
	last  map[int]float64 // each present series' last written value
	lastT int64
}

// NewWriter writes a timeline to w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	return &Writer{w: bw, enc: json.NewEncoder(bw), ids: map[string]int{}, last: map[int]float64{}}
}

// Write appends one scrape taken at t and flushes it, so a sweep that is
// killed leaves every scrape before it on disk. A scrape at or before the
// last one's time is dropped, as Timeline.Add drops it.
func (w *Writer) Write(t int64, pts []Point) error {
	if t <= w.lastT {
		return nil
	}
	w.lastT = t
	sc := line{T: t, V: map[int]num{}}
	seen := map[int]bool{}
	for _, p := range pts {
		k := p.key()
		id, ok := w.ids[k]
		if !ok {
			id = len(w.ids)
			w.ids[k] = id
			if err := w.enc.Encode(line{Series: &id, Name: p.Name, Labels: p.Labels, Type: p.Type}); err != nil {
				return fmt.Errorf("writing the timeline: %w", err)
			}
		}
		seen[id] = true
		if old, ok := w.last[id]; ok && math.Float64bits(old) == math.Float64bits(p.Value) {
			continue
		}
		w.last[id] = p.Value
		sc.V[id] = num(p.Value)
	}
	for id := range w.last {
		if !seen[id] {
			sc.Gone = append(sc.Gone, id)
			delete(w.last, id)
		}
	}
	if err := w.enc.Encode(sc); err != nil {
		return fmt.Errorf("writing the timeline: %w", err)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("writing the timeline: %w", err)
	}
	return nil
}

// Close writes the last scrape again with every series' value and flushes;
// it does not close the underlying writer.
func (w *Writer) Close() error {
	if w.lastT != 0 {
		end := line{T: w.lastT, V: map[int]num{}, End: true}
		for id, v := range w.last {
			end.V[id] = num(v)
		}
		if err := w.enc.Encode(end); err != nil {
			return fmt.Errorf("writing the timeline: %w", err)
		}
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("writing the timeline: %w", err)
	}
	return nil
}

// Read reads a timeline file back into every scrape it holds. A file cut
// short (a sweep killed mid-line) reads up to its last whole line.
func Read(r io.Reader) (*Timeline, error) {
	tl := &Timeline{}
	byID := map[int]int{}    // file's series number → tl.Series index
	cur := map[int]float64{} // present series' values
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	var torn error // a line that did not parse: fatal unless it is the last
	for sc.Scan() {
		n++
		if torn != nil {
			return tl, torn
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			torn = fmt.Errorf("timeline line %d: %w", n, err)
			continue
		}
		switch {
		case l.Series != nil:
			byID[*l.Series] = len(tl.Series)
			tl.Series = append(tl.Series, Series{Name: l.Name, Labels: l.Labels, Type: l.Type})
			col := make([]float64, len(tl.Times))
			for i := range col {
				col[i] = math.NaN()
			}
			tl.Values = append(tl.Values, col)
		case l.T != 0:
			for id, v := range l.V {
				if _, ok := byID[id]; !ok {
					return tl, fmt.Errorf("timeline line %d: series %d has no definition", n, id)
				}
				cur[id] = float64(v)
			}
			for _, id := range l.Gone {
				delete(cur, id)
			}
			k := len(tl.Times) - 1
			if k < 0 || l.T > tl.Times[k] {
				tl.Times = append(tl.Times, l.T)
				for i := range tl.Values {
					tl.Values[i] = append(tl.Values[i], math.NaN())
				}
				k++
			}
			for id, v := range cur {
				tl.Values[byID[id]][k] = v
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tl, fmt.Errorf("reading the timeline: %w", err)
	}
	return tl, nil
}
