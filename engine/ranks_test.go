package engine_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/timeline"
)

// TestReadPerRankSeries reads SGLang's expositions of eight scheduler ranks
// as the sweep does, each scrape's counters (loadgen.ParseMetrics) and a
// level's timeline (timeline.Summarize), and gets the server's figures, not
// eight times them: each rank of an attention-TP group counts the same
// retractions and, with --enable-metrics-for-all-schedulers, writes the same
// gauges, while the groups of DP attention hold batches of their own and add
// up (docs/ENGINES.md, SGLang).
func TestReadPerRankSeries(t *testing.T) {
	m := profile(t, engine.SGLang).Server
	for _, tt := range []struct {
		file                         string
		running, queued, kv, retract float64
	}{
		{"sglang-metrics-tp8.prom", 64, 3, 0.82, 12},
		{"sglang-metrics-tp8-all.prom", 64, 3, 0.82, 12},
		// Group 0: 40 running, 1 queued, 0.9 used, 5 retracted; group 1: 24, 2, 0.74, 7.
		{"sglang-metrics-dp2.prom", 64, 3, 0.82, 12},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got := metrics(t, tt.file)
			for name, want := range map[string]float64{m.Preemptions[0]: tt.retract, "sglang:generation_tokens_total": 124920} {
				if got[name] != want {
					t.Errorf("scrape: %s = %v, want %v", name, got[name], want)
				}
			}
			// The timeline sums the requests over the series and averages
			// the KV cache's use.
			s := timeline.Summarize(scrapes(t, tt.file, tt.file), m, 0, 2e9)
			if s == nil {
				t.Fatal("no summary")
			}
			for _, g := range []struct {
				name string
				got  *float64
				want float64
			}{
				{"running", mean(s.Running), tt.running},
				{"queued", mean(s.Queued), tt.queued},
				{"kv usage", mean(s.KVUsage), tt.kv},
			} {
				if g.got == nil {
					t.Errorf("timeline: no %s, want %v", g.name, g.want)
				} else if math.Abs(*g.got-g.want) > 1e-9 {
					t.Errorf("timeline: %s %v, want %v", g.name, *g.got, g.want)
				}
			}
		})
	}

	// A level's 8 retractions, whatever the number of ranks that count them.
	s := timeline.Summarize(scrapes(t, "sglang-metrics-tp8-before.prom", "sglang-metrics-tp8.prom"), m, 0, 2e9)
	want, _ := timeline.Increase([]int64{1e9, 2e9}, []float64{4, 12}, 0, 2e9)
	if s == nil || s.Preemptions == nil {
		t.Errorf("timeline: no preemptions, want %v", want)
	} else if math.Abs(s.Preemptions.Value-want) > 1e-9 {
		t.Errorf("timeline: preemptions %v, want %v (one rank's increase)", s.Preemptions.Value, want)
	}
}

// scrapes is a timeline of the files read one second apart.
func scrapes(t *testing.T, files ...string) *timeline.Timeline {
	t.Helper()
	var tl timeline.Timeline
	for k, file := range files {
		f, err := os.Open(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		pts, err := timeline.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tl.Add(int64(k+1)*1e9, pts)
	}
	return &tl
}

func mean(g *measure.GaugeStats) *float64 {
	if g == nil {
		return nil
	}
	return &g.Mean
}

// TestCounted: which label sets of a series a figure reads.
func TestCounted(t *testing.T) {
	rank := func(tp, ep, dp string) map[string]string {
		set := map[string]string{"model_name": "kimi", "tp_rank": tp, "pp_rank": "0", "moe_ep_rank": ep}
		if dp != "" {
			set["dp_rank"] = dp
		}
		return set
	}
	for _, tt := range []struct {
		name   string
		series string
		sets   []map[string]string
		want   []bool
	}{
		{"tensor-parallel ranks: the lowest", "sglang:num_retracted_requests_total",
			[]map[string]string{rank("2", "2", ""), rank("10", "10", ""), rank("0", "0", ""), rank("1", "1", "")},
			[]bool{false, false, true, false}},
		{"one rank", "sglang:num_running_reqs", []map[string]string{rank("0", "0", "")}, []bool{true}},
		{"attention-DP groups: the lowest of each", "sglang:num_running_reqs",
			[]map[string]string{rank("5", "5", "1"), rank("4", "4", "1"), rank("1", "1", "0"), rank("0", "0", "0")},
			[]bool{false, true, false, true}},
		// Another label tells the series apart: each is a share.
		{"other labels", "sglang:num_running_reqs",
			[]map[string]string{{"model_name": "a", "tp_rank": "0"}, {"model_name": "b", "tp_rank": "1"}},
			[]bool{true, true}},
		{"tokenizer series", "sglang:generation_tokens_total",
			[]map[string]string{{"model_name": "kimi"}, {"model_name": "kimi", "tp_rank": "1"}}, []bool{true, true}},
		// vLLM's engine cores each hold requests of their own.
		{"vllm engine cores", "vllm:num_requests_running",
			[]map[string]string{{"engine": "0"}, {"engine": "1"}}, []bool{true, true}},
		{"none", "sglang:num_running_reqs", nil, []bool{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := engine.Counted(tt.series, tt.sets); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Counted = %v, want %v", got, tt.want)
			}
		})
	}
}
