package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/model"
	"gopkg.in/yaml.v3"
)

// demoDisaggFlags are the sim's timing flags of configs/demo-disagg.yaml
// (its engine.command): the speed and the stream interval the demo's
// servers run at, which decide whether its inter-token gaps stand above
// what a shared machine's scheduling adds to them.
func demoDisaggFlags(t *testing.T) (speed, interval string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "configs", "demo-disagg.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Engine struct {
			Command []string `yaml:"command"`
		} `yaml:"engine"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	speed, interval = "1", "1"
	for i, a := range c.Engine.Command[:max(0, len(c.Engine.Command)-1)] {
		switch a {
		case "--sim-speed":
			speed = c.Engine.Command[i+1]
		case "--stream-interval":
			interval = c.Engine.Command[i+1]
		}
	}
	return speed, interval
}

// closedLoopITL runs a closed loop of c clients against url, n requests of
// a 4000-token prompt and 100 to 300 output tokens each (the demo's), and
// returns every inter-token gap as bakeoff's load generator reads it: each
// content chunk's gap since the one before, over the stream's mean tokens
// per chunk (the sim reports usage only at the end).
func closedLoopITL(t *testing.T, url string, c, n int, seed uint64) []time.Duration {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	maxTokens := make([]int, n)
	for i := range maxTokens {
		maxTokens[i] = 100 + rng.IntN(201)
	}
	var (
		mu   sync.Mutex
		gaps []time.Duration
		next int
		errs []error
	)
	one := func(i int) error {
		// 16,000 bytes are 4000 prompt tokens (the prefix cache is off).
		prompt := strings.Repeat(string(rune('a'+i%26))+"bcd", 4000)
		body, _ := json.Marshal(map[string]any{"model": "m", "prompt": prompt, "max_tokens": maxTokens[i],
			"ignore_eos": true, "temperature": 0, "stream": true, "stream_options": map[string]any{"include_usage": true}})
		resp, err := http.Post(url, "application/json", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var (
			times  []time.Time
			tokens int
		)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			now := time.Now()
			var ev struct {
				Choices []struct {
					Text string `json:"text"`
				} `json:"choices"`
				Usage *struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				return err
			}
			if ev.Usage != nil {
				tokens = ev.Usage.CompletionTokens
			}
			if len(ev.Choices) > 0 && ev.Choices[0].Text != "" {
				times = append(times, now)
			}
		}
		if len(times) < 2 || tokens < len(times) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		for k := 1; k < len(times); k++ {
			gaps = append(gaps, times[k].Sub(times[k-1])*time.Duration(len(times))/time.Duration(tokens))
		}
		return nil
	}
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				if err := one(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	return gaps
}

// schedulingFloor is how long a process of the demo may wait for a core on
// the 2-core machine the demo runs on, shared by its servers, its router, its
// load generator and samplers: the last demo at 40× read an inter-token p99
// of 1.4 ms at one stream, where the model's gaps are 0.27 ms, a quarter of
// the gaps there bursts of chunks arriving together. The modelled gaps the
// demo compares must stand above it in wall time.
const schedulingFloor = 2 * time.Millisecond

// TestDemoDisaggITLTail: at the speed and stream interval the disaggregation
// demo runs its servers with (configs/demo-disagg.yaml), real processes show
// the trade-off's inter-token side as the virtual harness has it (docs/
// SIM.md, The trade-off): the aggregated server's ITL tail grows with the
// long prefills that land among its running decodes, while a decode
// worker's stays its decode step, so that under load the disaggregated tail
// is the shorter. Real processes read their gaps in wall time, the modelled
// gaps divided by the speed, plus what the machine's scheduling adds; at too
// high a speed the decode worker's steps fall below that, and the tails
// compared are the machine's, not the model's.
func TestDemoDisaggITLTail(t *testing.T) {
	speed, interval := demoDisaggFlags(t)
	x, err := strconv.ParseFloat(speed, 64)
	if err != nil || x <= 0 {
		t.Fatalf("demo speed %q", speed)
	}
	agg, pre, dec := simtest.DisaggSetups(t, cmdline.ParseArgs)
	load := model.LatencyLoad{Concurrency: 16, Requests: 160, PromptTokens: 4000, OutputTokens: 200, Seed: 1}
	wall := func(d time.Duration) time.Duration { return time.Duration(float64(d) / x) }
	a, d := model.RunVirtualLatency(agg, load), model.RunVirtualDisagg(pre, dec, load)
	t.Logf("modelled at %s×, C=16: ITL p99 aggregated %v, disaggregated %v (p50 %v)", speed,
		wall(model.Quantile(a.ITL, 0.99)), wall(model.Quantile(d.ITL, 0.99)), wall(model.Quantile(d.ITL, 0.5)))
	if step := wall(model.Quantile(d.ITL, 0.5)); step < schedulingFloor {
		t.Errorf("at --sim-speed %s the decode worker's step under load is %v of wall time, under the %v a process waits for a core on the demo's machine: its inter-token tail would be the machine's", speed, step, schedulingFloor)
	}

	flags := []string{"--sim-speed", speed, "--stream-interval", interval}
	aggSrv := startSim(t, nil, append([]string{"--tp-size", "8", "--max-running-requests", "256"}, flags...)...)
	pd := startPD(t, flags...)
	aggSrv.waitHealthy()
	// A wall-clock tail on a shared 2-core machine is partly the machine's:
	// a burst of other work during one measurement can hide the trade-off
	// in it. The measurement is taken up to three times and passes on the
	// first that shows it; a sim without it fails all three.
	var failures []string
	for attempt := 1; attempt <= 3; attempt++ {
		failures = itlTailOnce(t, aggSrv.url("/v1/completions"), pd.router.url("/v1/completions"))
		if len(failures) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(failures, "; "))
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// itlTailOnce measures both servers' ITL tails at C=1 and C=16 and returns
// what of the trade-off they did not show.
func itlTailOnce(t *testing.T, aggURL, pdURL string) []string {
	t.Helper()
	var failures []string
	p99 := map[string]time.Duration{}
	for _, c := range []struct{ c, n int }{{1, 4}, {16, 48}} {
		for _, s := range []struct{ name, url string }{
			{"aggregated", aggURL},
			{"disaggregated", pdURL},
		} {
			g := closedLoopITL(t, s.url, c.c, c.n, 1)
			key := fmt.Sprintf("%s C=%d", s.name, c.c)
			p99[key] = model.Quantile(g, 0.99)
			t.Logf("%s: ITL p50 %v, p99 %v over %d gaps", key, model.Quantile(g, 0.5), p99[key], len(g))
		}
	}
	aggGrowth := float64(p99["aggregated C=16"]) / float64(p99["aggregated C=1"])
	pdGrowth := float64(p99["disaggregated C=16"]) / float64(p99["disaggregated C=1"])
	if aggGrowth < 3 {
		failures = append(failures, fmt.Sprintf("aggregated ITL p99 grew %.1f× from C=1 to C=16, want at least 3×: its prefills should stall its running streams", aggGrowth))
	}
	// Modelled, the aggregated tail grows far more; beside make test's
	// other binaries the decode worker's gaps also wait for a core, and one
	// such run read 4.2× against 6.7×: the bound is the direction.
	if pdGrowth > aggGrowth/1.5 {
		failures = append(failures, fmt.Sprintf("disaggregated ITL p99 grew %.1f× from C=1 to C=16, the aggregated %.1f×: a decode worker's tail should grow with its batch only", pdGrowth, aggGrowth))
	}
	// Modelled, the aggregated tail is 6.8× the disaggregated at C=16; a
	// quiet machine reads 2× and more. Beside make test's other binaries
	// (seven at a time on two cores) the decode worker's gaps wait for a
	// core too, and runs read 1.8× and 1.9×: the bound is the direction,
	// with room for the machine's share.
	if r := float64(p99["aggregated C=16"]) / float64(p99["disaggregated C=16"]); r < 1.5 {
		failures = append(failures, fmt.Sprintf("at C=16 the aggregated ITL p99 is %.1f× the disaggregated, want at least 1.5×", r))
	}
	return failures
}
