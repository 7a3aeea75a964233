package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
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
)

// Metric names read for speculative accept length (shared/facts/engines.md).
const (
	sglangAcceptGauge  = "sglang:spec_accept_length"
	vllmAcceptedTokens = "vllm:spec_decode_num_accepted_tokens_total"
	vllmDrafts         = "vllm:spec_decode_num_drafts_total"
)

// Accept-length sources written to LevelSummary.AcceptLengthSource.
const (
	SourceVLLMCounters = "vllm:spec_decode counters, delta over the level: 1 + accepted/drafts"
	SourceSGLangMid    = "sglang:spec_accept_length at mid-level (gauge over the last 40 decode batches)"
	SourceSGLangAfter  = "sglang:spec_accept_length after the level (gauge over the last 40 decode batches, so it leans to the drain tail)"
	SourceServerInfo   = "/get_server_info avg_spec_accept_length (cumulative over the server's life)"
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

// metricsProbe scrapes one level's server metrics. A server without
// /metrics or /get_server_info is normal: the probe then has no figures.
type metricsProbe struct {
	client        *http.Client
	base, apiKey  string
	dir           string
	level, repeat int

	mu       sync.Mutex
	values   map[scrapePhase]map[string]float64
	info     map[scrapePhase]float64 // avg_spec_accept_length
	warnings []string
}

func newMetricsProbe(c *http.Client, base, apiKey, dir string, level, repeat int) *metricsProbe {
	return &metricsProbe{client: c, base: base, apiKey: apiKey, dir: dir, level: level, repeat: repeat,
		values: map[scrapePhase]map[string]float64{}, info: map[scrapePhase]float64{}}
}

// scrape reads /metrics and /get_server_info once, keeps the figures, and
// saves the raw answers when a directory was given.
func (m *metricsProbe) scrape(ctx context.Context, phase scrapePhase) {
	if body, ok := m.get(ctx, "/metrics"); ok {
		m.save(phase, "metrics.txt", body)
		vals, err := ParseMetrics(bytes.NewReader(body))
		m.mu.Lock()
		if err != nil {
			m.warnings = append(m.warnings, fmt.Sprintf("/metrics %s the level: %v", phase, err))
		}
		m.values[phase] = vals
		m.mu.Unlock()
	}
	if body, ok := m.get(ctx, "/get_server_info"); ok {
		m.save(phase, "server_info.json", body)
		if v, ok := serverInfoAcceptLength(body); ok {
			m.mu.Lock()
			m.info[phase] = v
			m.mu.Unlock()
		}
	}
}

func (m *metricsProbe) get(ctx context.Context, path string) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.base+path, nil)
	if err != nil {
		return nil, false
	}
	if m.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.apiKey)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, metricsBodyBytes))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, false
	}
	return body, true
}

func (m *metricsProbe) save(phase scrapePhase, name string, body []byte) {
	if m.dir == "" {
		return
	}
	path := filepath.Join(m.dir, fmt.Sprintf("C%03d-r%d-%s-%s", m.level, m.repeat, phase, name))
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

// acceptLength is the level's speculative accept length and where it came
// from, best source first; an empty source means the server exposes none.
func (m *metricsProbe) acceptLength() (float64, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	before, after := m.values[phaseBefore], m.values[phaseAfter]
	if before != nil && after != nil {
		dd := after[vllmDrafts] - before[vllmDrafts]
		da := after[vllmAcceptedTokens] - before[vllmAcceptedTokens]
		if dd > 0 && da >= 0 {
			return 1 + da/dd, SourceVLLMCounters
		}
	}
	if v := m.values[phaseMid][sglangAcceptGauge]; v > 0 {
		return v, SourceSGLangMid
	}
	if v := after[sglangAcceptGauge]; v > 0 {
		return v, SourceSGLangAfter
	}
	if v := m.info[phaseAfter]; v > 0 {
		return v, SourceServerInfo
	}
	return 0, ""
}

// ParseMetrics parses Prometheus text exposition into one value per metric
// name: counters summed over their label sets (e.g. per engine), gauges and
// untyped values averaged (a per-rank gauge is not additive), except that a
// name ending in _total is always a counter. Histograms and
// summaries contribute their _count and _sum. A parse error returns what was
// read before it.
func ParseMetrics(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	out := make(map[string]float64, len(fams))
	for name, f := range fams {
		var sum float64
		n := 0
		for _, mt := range f.GetMetric() {
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

// serverInfoAcceptLength reads SGLang's internal_states[0].avg_spec_accept_length.
func serverInfoAcceptLength(body []byte) (float64, bool) {
	var info struct {
		InternalStates []struct {
			AvgSpecAcceptLength *float64 `json:"avg_spec_accept_length"`
		} `json:"internal_states"`
	}
	if json.Unmarshal(body, &info) != nil || len(info.InternalStates) == 0 ||
		info.InternalStates[0].AvgSpecAcceptLength == nil {
		return 0, false
	}
	return *info.InternalStates[0].AvgSpecAcceptLength, true
}
