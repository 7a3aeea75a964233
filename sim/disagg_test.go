package sim

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/server"
)

// routerProc is a running `bakeoff sim router`.
type routerProc struct {
	cmd  *exec.Cmd
	log  *testbin.SyncBuffer
	port int
	done chan struct{}
}

func (p *routerProc) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
}

// startRouter runs the router on a free loopback port and stops it at
// cleanup.
func startRouter(t *testing.T, args ...string) *routerProc {
	t.Helper()
	p := &routerProc{log: &testbin.SyncBuffer{}, port: freePort(t), done: make(chan struct{})}
	args = append([]string{"sim", "router", "--host", "127.0.0.1", "--port", strconv.Itoa(p.port)}, args...)
	p.cmd = exec.Command(simBinary, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("router log:\n%s", simtest.Tail(p.log.String(), 30))
		}
	})
	return p
}

// pdDeployment is a prefill worker, a decode worker and a router in front.
type pdDeployment struct {
	prefill, decode *simProc
	router          *routerProc
}

func startPD(t *testing.T, extra ...string) pdDeployment {
	t.Helper()
	boot := freePort(t)
	d := pdDeployment{
		prefill: startSim(t, nil, append([]string{"--tp-size", "4", "--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", strconv.Itoa(boot)}, extra...)...),
		decode:  startSim(t, nil, append([]string{"--tp-size", "4", "--disaggregation-mode", "decode"}, extra...)...),
	}
	d.router = startRouter(t, "--pd-disaggregation", "--prefill", d.prefill.url(""), strconv.Itoa(boot), "--decode", d.decode.url(""))
	if !waitFor(t, 20*time.Second, func() bool { return status(d.router.url("/health")) == 200 }) {
		t.Fatalf("the router never turned healthy:\n%s", d.router.log.String())
	}
	return d
}

// TestPDServesThroughRouter: a prefill worker, a decode worker and the
// router serve a streaming request end to end. The answer is the decode
// worker's, token for token what one aggregated server answers; the prefill
// worker computed the prompt and nothing more, the decode worker decoded
// without a prefill of its own.
func TestPDServesThroughRouter(t *testing.T) {
	pd := startPD(t, "--enable-metrics")
	agg := startSim(t, nil, "--tp-size", "8")
	agg.waitHealthy()
	body := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "split the work"}},
		"max_tokens": 48, "ignore_eos": true, "temperature": 0, "stream": true, "stream_options": map[string]any{"include_usage": true}}
	code, evs := post(t, pd.router.url("/v1/chat/completions"), body)
	text, chunks, usage, done := streamText(evs)
	if code != 200 || !done {
		t.Fatalf("router stream: status %d, done %v", code, done)
	}
	if usage == nil || usage["completion_tokens"] != float64(48) || chunks != 48 {
		t.Errorf("usage %v over %d content chunks, want 48 tokens one per chunk", usage, chunks)
	}
	_, aggEvs := post(t, agg.url("/v1/chat/completions"), body)
	if aggText, _, _, _ := streamText(aggEvs); text != aggText {
		t.Errorf("disaggregated text %q differs from the aggregated server's %q", text, aggText)
	}
	if log := pd.prefill.log.String(); !strings.Contains(log, "Prefill batch, #new-seq: 1") || strings.Contains(log, "Decode batch") {
		t.Errorf("the prefill worker should prefill and never decode:\n%s", simtest.Tail(log, 20))
	}
	if log := pd.decode.log.String(); strings.Contains(log, "Prefill batch") || !strings.Contains(log, "Decode batch, #running-req: 1") {
		t.Errorf("the decode worker should decode and never prefill:\n%s", simtest.Tail(log, 20))
	}
	resp, err := http.Get(pd.router.url("/engine_metrics"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := parseTestMetrics(resp)
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := pd.prefill.url(""), pd.decode.url("")
	for series, want := range map[string]float64{
		`sglang:generation_tokens_total{worker_addr="` + pre + `"}`: 1,
		`sglang:generation_tokens_total{worker_addr="` + dec + `"}`: 48,
		`sglang:num_requests_total{worker_addr="` + dec + `"}`:      1,
	} {
		if vals[series] != want {
			t.Errorf("router /engine_metrics %s = %v, want %v", series, vals[series], want)
		}
	}
	// The gateway's main port: no /metrics and no /server_info (its own
	// metrics are on --prometheus-port), the flush a POST.
	for path, want := range map[string]int{"/v1/models": 200, "/get_server_info": 200, "/get_model_info": 200,
		"/metrics": 404, "/server_info": 404, "/flush_cache": 405} {
		if got := status(pd.router.url(path)); got != want {
			t.Errorf("router GET %s: %d, want %d", path, got, want)
		}
	}
	// Its server info is the first prefill worker's, which does not decode.
	var info map[string]any
	getJSON(t, pd.router.url("/get_server_info"), &info)
	if info["disaggregation_mode"] != "prefill" {
		t.Errorf("router /get_server_info: disaggregation_mode %v, want the prefill worker's", info["disaggregation_mode"])
	}
	if code, evs := post(t, pd.router.url("/v1/tokenize"), map[string]any{"prompt": "count me"}); code != 200 || !strings.Contains(evs[0].raw, `"count":2`) {
		t.Errorf("router /v1/tokenize: %d %s", code, evs[0].raw)
	}
}

// parseTestMetrics reads a merged exposition into sums keyed by name and
// worker, as name{worker_addr="URL"}.
func parseTestMetrics(resp *http.Response) (map[string]float64, error) {
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, errors.New(resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			addr := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "worker_addr" {
					addr = l.GetValue()
				}
			}
			out[fmt.Sprintf("%s{worker_addr=%q}", name, addr)] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out, nil
}

// TestPDFailures: a decode worker asked directly, without the router's
// bootstrap, refuses; a request whose prefill is refused gets the prefill
// worker's refusal through the router rather than a decode worker waiting
// for a KV cache that will not come.
func TestPDFailures(t *testing.T) {
	pd := startPD(t)
	code, evs := post(t, pd.decode.url("/v1/completions"), map[string]any{"prompt": "direct", "max_tokens": 4})
	if code != 400 || !strings.Contains(evs[0].raw, "send requests through the router") {
		t.Errorf("decode worker without bootstrap: %d %s", code, evs[0].raw)
	}
	// A negative max_tokens is refused by both workers before anything runs.
	code, evs = post(t, pd.router.url("/v1/completions"), map[string]any{"prompt": "bad", "max_tokens": -1})
	if code != 400 || !strings.Contains(evs[0].raw, "max_tokens must be non-negative") {
		t.Errorf("refused request through the router: %d %s", code, evs[0].raw)
	}
	// The prefill worker goes away: the router says so, at once.
	pd.prefill.cmd.Process.Kill()
	pd.prefill.wait(10 * time.Second)
	start := time.Now()
	code, evs = post(t, pd.router.url("/v1/completions"), map[string]any{"prompt": "orphan", "max_tokens": 4})
	if code != 502 || time.Since(start) > server.KVWaitTimeout/2 {
		t.Errorf("prefill worker gone: %d %s after %v", code, evs[0].raw, time.Since(start))
	}
}

// TestRouterRefusesFromProcess: a bad router command line exits 2 with
// argparse's usage and error on stderr.
func TestRouterRefusesFromProcess(t *testing.T) {
	cmd := exec.Command(simBinary, "sim", "router", "--decode", "http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: launch_router.py") {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}
