package sim

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// TestMetricsTP: a TP-8 server writes its scheduler's gauges as SGLang's
// eight scheduler ranks do, from rank 0 alone or, with
// --enable-metrics-for-all-schedulers, from every rank with the same batch,
// and bakeoff reads them as the sweep does (a scrape with
// loadgen.ParseMetrics, a level with the timeline and SGLang's profile) as
// the one batch they are, not eight.
func TestMetricsTP(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra []string
		ranks int
	}{
		{"default", nil, 1},
		{"all schedulers", []string{"--enable-metrics-for-all-schedulers"}, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Simulated time at its own pace, so that the request below is
			// still decoding while the scrapes are taken.
			args := append(strings.Fields(simtest.Baseline), "--enable-metrics", "--sim-speed", "1", "--sim-load-time", "50ms")
			p := startSim(t, nil, append(args, tt.extra...)...)
			p.waitHealthy()
			stop := holdRequest(t, p)
			defer stop()

			// Two scrapes, the first once the request is in the batch.
			var bodies [][]byte
			if !waitFor(t, 20*time.Second, func() bool {
				body := scrape(t, p)
				if running, _ := rankValues(t, body, "sglang:num_running_reqs"); len(running) > 0 && running[0] >= 1 {
					bodies = append(bodies, body)
				}
				return len(bodies) > 0
			}) {
				t.Fatal("the request never showed in sglang:num_running_reqs")
			}
			bodies = append(bodies, scrape(t, p))

			var tl timeline.Timeline
			var rank0 float64
			for k, body := range bodies {
				running, ranks := rankValues(t, body, "sglang:num_running_reqs")
				if len(running) != tt.ranks {
					t.Fatalf("scrape %d: num_running_reqs from ranks %v, want %d ranks", k, ranks, tt.ranks)
				}
				for i, v := range running {
					if ranks[i] != strconv.Itoa(i) || v != running[0] {
						t.Errorf("scrape %d: rank %s writes %v, rank 0 %v: want the same batch from ranks 0…%d", k, ranks[i], v, running[0], tt.ranks-1)
					}
				}
				rank0 += running[0] / float64(len(bodies))
				got, err := loadgen.ParseMetrics(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if got["sglang:num_running_reqs"] != running[0] {
					t.Errorf("scrape %d: read %v running, the server runs %v", k, got["sglang:num_running_reqs"], running[0])
				}
				pts, err := timeline.Parse(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				tl.Add(int64(k+1)*1e9, pts)
			}
			s := timeline.Summarize(&tl, engine.Lookup(engine.SGLang).Server, 0, 2e9)
			if s == nil || s.Running == nil {
				t.Errorf("timeline: no running requests, want mean %v", rank0)
			} else if math.Abs(s.Running.Mean-rank0) > 1e-9 {
				t.Errorf("timeline: running mean %v, want %v (one batch)", s.Running.Mean, rank0)
			}
		})
	}
}

// holdRequest starts a long streaming completion and returns once its first
// chunk came; stop cancels it.
func holdRequest(t *testing.T, p *simProc) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"model":"kimi","prompt":"Once upon a time","max_tokens":4000,"ignore_eos":true,"stream":true}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url("/v1/completions"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = func() { cancel(); resp.Body.Close() }
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			return stop
		}
	}
	stop()
	t.Fatalf("no chunk from the request (status %d)", resp.StatusCode)
	return nil
}

func scrape(t *testing.T, p *simProc) []byte {
	t.Helper()
	resp, err := http.Get(p.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return body
}

// rankValues are a gauge's values in an exposition and the tp_rank of each,
// in the exposition's order.
func rankValues(t *testing.T, body []byte, name string) (vals []float64, ranks []string) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	f := fams[name]
	if f == nil || f.GetType() != dto.MetricType_GAUGE {
		t.Fatalf("/metrics has no gauge %s", name)
	}
	for _, m := range f.GetMetric() {
		rank := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "tp_rank" {
				rank = l.GetValue()
			}
		}
		vals, ranks = append(vals, m.GetGauge().GetValue()), append(ranks, rank)
	}
	return vals, ranks
}
