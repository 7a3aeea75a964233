package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
)

const (
	// metricsTimeout bounds one scrape; a slow metrics endpoint must not
	// stall the sweep.
	metricsTimeout = 5 * time.Second
	// metricsBodyBytes bounds one scrape's size.
	metricsBodyBytes = 16 << 20
)

type scrapePhase string

const (
	phaseBefore scrapePhase = "before"
	phaseMid    scrapePhase = "mid"
	phaseAfter  scrapePhase = "after"
)

// metricsProbe scrapes one level's server metrics and the engine's info
// call. A server without them is normal: the probe then has no figures.
type metricsProbe struct {
	client       *http.Client
	engine       *engine.Profile
	base, apiKey string
	dir          string
	level        measure.Level
	repeat       int

	mu       sync.Mutex
	values   map[scrapePhase]map[string]float64
	info     map[scrapePhase][]byte // the info call's answers
	infoPath string                 // the info call's path that answered
	warnings []string
}

func newMetricsProbe(c *http.Client, p *engine.Profile, base, apiKey, dir string, level measure.Level, repeat int) *metricsProbe {
	return &metricsProbe{client: c, engine: p, base: base, apiKey: apiKey, dir: dir, level: level, repeat: repeat,
		values: map[scrapePhase]map[string]float64{}, info: map[scrapePhase][]byte{}}
}

// scrape reads /metrics and the engine's info call once, keeps the figures,
// and saves the raw answers when a directory was given.
func (m *metricsProbe) scrape(ctx context.Context, phase scrapePhase) {
	if body, ok := m.get(ctx, "/metrics"); ok {
		m.save(phase, "metrics.txt", body)
		vals, err := m.parse(body)
		m.mu.Lock()
		if err != nil {
			m.warnings = append(m.warnings, fmt.Sprintf("/metrics %s the level: %v", phase, err))
		}
		m.values[phase] = vals
		m.mu.Unlock()
	}
	if in := m.engine.Info; in != nil {
		if body, ok := m.getInfo(ctx, in); ok {
			m.save(phase, in.File, body)
			m.mu.Lock()
			m.info[phase] = body
			m.mu.Unlock()
		}
	}
}

// getInfo asks the info call's paths, newest first, moving to an older one
// only on 404 (engine.InfoCall.Fallback); the path that answered is kept, so
// the later scrapes of the level ask it alone.
func (m *metricsProbe) getInfo(ctx context.Context, in *engine.InfoCall) ([]byte, bool) {
	m.mu.Lock()
	known := m.infoPath
	m.mu.Unlock()
	if known != "" {
		body, _, ok := m.getStatus(ctx, known)
		return body, ok
	}
	path, status, body, _ := in.Ask(func(path string) (int, []byte, error) {
		body, status, ok := m.getStatus(ctx, path)
		if !ok && status == http.StatusOK {
			status = 0 // an answer whose body could not be read is none
		}
		return status, body, nil
	})
	if status != http.StatusOK {
		return nil, false
	}
	m.mu.Lock()
	m.infoPath = path
	m.mu.Unlock()
	return body, true
}

// parse reads a /metrics answer as the engine writes it: Prometheus text,
// or the engine's own format.
func (m *metricsProbe) parse(body []byte) (map[string]float64, error) {
	if m.engine.ParseMetrics != nil {
		return m.engine.ParseMetrics(body)
	}
	return ParseMetrics(bytes.NewReader(body))
}

func (m *metricsProbe) get(ctx context.Context, path string) ([]byte, bool) {
	body, _, ok := m.getStatus(ctx, path)
	return body, ok
}

// getStatus is get with the answer's status (0 when none came).
func (m *metricsProbe) getStatus(ctx context.Context, path string) ([]byte, int, bool) {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return nil, 0, false
	}
	if m.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.apiKey)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, 0, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, metricsBodyBytes))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, false
	}
	return body, resp.StatusCode, true
}

func (m *metricsProbe) save(phase scrapePhase, name string, body []byte) {
	if m.dir == "" {
		return
	}
	lv := fmt.Sprintf("C%03d", m.level.Concurrency)
	if measure.IsSpeed(m.level) {
		lv = "S" + measure.FormatRate(m.level.Speed)
	} else if measure.IsRate(m.level) {
		lv = "R" + measure.FormatRate(m.level.Rate)
	}
	path := filepath.Join(m.dir, fmt.Sprintf("%s-r%d-%s-%s", lv, m.repeat, phase, name))
	err := os.MkdirAll(m.dir, 0o700)
	if err == nil {
		err = os.WriteFile(path, body, 0o600)
	}
	if err != nil {
		m.mu.Lock()
		m.warnings = append(m.warnings, fmt.Sprintf("saving %s: %v", path, err))
		m.mu.Unlock()
	}
}

// acceptLength is the level's speculative accept length from the scrapes
// and where it came from, as the engine profile reads them; an empty source
// means the server exposes none.
func (m *metricsProbe) acceptLength() (float64, string) {
	if m.engine.Accept == nil {
		return 0, ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engine.Accept(engine.Scrapes{Before: m.values[phaseBefore], Mid: m.values[phaseMid],
		After: m.values[phaseAfter], InfoAfter: m.info[phaseAfter]})
}

// ParseMetrics parses Prometheus text exposition into one value per metric
// name: counters summed over their label sets (e.g. per engine), gauges and
// untyped values averaged (a per-rank gauge is not additive), except that a
// name ending in _total is always a counter. Histograms and
// summaries contribute their _count and _sum. Of a series that the ranks of
// one scheduler group write alike, one copy per group is read
// (engine.Counted). A parse error returns what was read before it.
func ParseMetrics(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	out := make(map[string]float64, len(fams))
	for name, f := range fams {
		var sum float64
		n := 0
		for _, mt := range counted(name, f.GetMetric()) {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sum += mt.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				sum += mt.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				sum += mt.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name+"_count"] += float64(mt.GetHistogram().GetSampleCount())
				out[name+"_sum"] += mt.GetHistogram().GetSampleSum()
				continue
			case dto.MetricType_SUMMARY:
				out[name+"_count"] += float64(mt.GetSummary().GetSampleCount())
				out[name+"_sum"] += mt.GetSummary().GetSampleSum()
				continue
			default:
				continue
			}
			n++
		}
		if n == 0 {
			continue
		}
		// A _total sample whose TYPE line named the family without the
		// suffix parses as untyped; it is still a counter.
		switch {
		case f.GetType() == dto.MetricType_COUNTER || strings.HasSuffix(name, "_total"):
			out[name] = sum
			// Some exporters name the family without the _total its samples carry.
			if !strings.HasSuffix(name, "_total") {
				out[name+"_total"] = sum
			}
		default:
			out[name] = sum / float64(n)
		}
	}
	if err != nil {
		return out, fmt.Errorf("parsing metrics: %w", err)
	}
	return out, nil
}

// counted are the samples of a family that its figure reads
// (engine.Counted).
func counted(name string, ms []*dto.Metric) []*dto.Metric {
	sets := make([]map[string]string, len(ms))
	for i, mt := range ms {
		sets[i] = make(map[string]string, len(mt.GetLabel()))
		for _, l := range mt.GetLabel() {
			sets[i][l.GetName()] = l.GetValue()
		}
	}
	keep := engine.Counted(name, sets)
	out := ms[:0:0]
	for i, mt := range ms {
		if keep[i] {
			out = append(out, mt)
		}
	}
	return out
}
