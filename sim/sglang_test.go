package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/server"
)

// TestStartupAsSGLang: what SGLang, as the sim follows it, does at startup
// with the flags and environment a campaign sets: deprecated aliases warn
// in SGLang's words and the server runs; FlashInfer allreduce fusion asked
// for on the simulated GPU refuses to start unless the GPU is SM90 or
// SM10x; SGLANG_ENABLE_SPEC_V2 is only noted; speculative decoding with
// topk 4 runs on the overlap worker; adaptive speculative decoding runs,
// falls back to static params, or ends the server as SGLang's hook decides.
func TestStartupAsSGLang(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		args   string
		exit   int // 0: runs and turns healthy
		log    []string
		fusion any // flashinfer_allreduce_fusion_backend in /server_info
	}{
		{"deprecated aliases", nil, "--tp 2 --cuda-graph-max-bs 64 --disable-cuda-graph", 0, []string{
			"\x1b[1;33m'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-max-bs-decode' instead.\x1b[0m\n",
			"\x1b[1;33m'--disable-cuda-graph' is deprecated and will be removed in a future release. Use '--cuda-graph-backend-{decode,prefill}=disabled' instead.\x1b[0m\n",
		}, nil},
		{"fusion flag on SM120", nil, "--tp 2 --enable-flashinfer-allreduce-fusion", 1, []string{
			"] --enable-flashinfer-allreduce-fusion is deprecated. Please use --flashinfer-allreduce-fusion-backend=auto instead.\n",
			"TP0] Scheduler hit an exception: Traceback (most recent call last):\n",
			"\nValueError: FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.\n",
		}, nil},
		{"fusion backend on SM120", nil, "--tp 2 --flashinfer-allreduce-fusion-backend trtllm", 1, []string{
			"\nValueError: FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.\n",
		}, nil},
		{"fusion flag on SM90", map[string]string{gpu.SimComputeCapEnv: "9.0"}, "--tp 2 --enable-flashinfer-allreduce-fusion", 0, []string{
			"] --enable-flashinfer-allreduce-fusion is deprecated. Please use --flashinfer-allreduce-fusion-backend=auto instead.\n",
		}, "auto"},
		{"fusion by itself on SM100", map[string]string{gpu.SimComputeCapEnv: "10.0"}, "--tp 2", 0, nil, "auto"},
		{"fusion enforced off on SM100", map[string]string{gpu.SimComputeCapEnv: "10.0"}, "--tp 2 --enforce-disable-flashinfer-allreduce-fusion", 0, nil, nil},
		{"spec v2 env, topk 4", map[string]string{cmdline.SpecV2Env: "1"}, "--tp 2 --speculative-algorithm EAGLE3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8", 0, []string{
			"] SGLANG_ENABLE_SPEC_V2 has been removed: speculative decoding always runs the V2 worker. Use --disable-overlap-schedule to select the non-overlap (synchronous) path.\n",
		}, nil},
		{"unknown speculative algorithm", nil, "--speculative-algorithm MEDUSA", 1, []string{
			"\nValueError: Unknown speculative algorithm name: MEDUSA\n",
		}, nil},
		{"adaptive speculative decoding", nil, "--tp 2 --speculative-algorithm EAGLE3 --speculative-adaptive", 0, []string{
			"] AdaptiveSpeculativeParams initialized: steps=3, candidate_steps=[1, 3, 5, 7]\n",
		}, nil},
		{"adaptive with topk 4 falls back", nil, "--tp 2 --speculative-algorithm EAGLE3 --speculative-adaptive --speculative-eagle-topk 4 --speculative-num-draft-tokens 8", 0, []string{
			"] speculative_adaptive disabled: speculative_eagle_topk=4 (only topk=1 is supported). Falling back to static speculative params.\n",
		}, nil},
		{"adaptive config SGLang cannot open", nil, "--speculative-algorithm EAGLE3 --speculative-adaptive --speculative-adaptive-config /nonexistent/adaptive.json", 1, []string{
			"\nFileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/adaptive.json'\n",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startSim(t, tt.env, strings.Fields(tt.args)...)
			if tt.exit != 0 {
				if code := p.wait(10 * time.Second); code != tt.exit {
					t.Errorf("exit %d, want %d", code, tt.exit)
				}
				if len(p.holders()) != 0 {
					t.Error("a server SGLang refuses started its schedulers")
				}
			} else {
				p.waitHealthy()
				var info map[string]any
				getJSON(t, p.url("/server_info"), &info)
				if info["flashinfer_allreduce_fusion_backend"] != tt.fusion || info["enable_flashinfer_allreduce_fusion"] != false {
					t.Errorf("fusion backend %v, want %v; enable flag %v", info["flashinfer_allreduce_fusion_backend"], tt.fusion, info["enable_flashinfer_allreduce_fusion"])
				}
			}
			for _, want := range tt.log {
				if !strings.Contains(p.log.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, simtest.Tail(p.log.String(), 15))
				}
			}
		})
	}
}

// TestServerInfoPaths: /server_info answers; /get_server_info, SGLang's
// deprecated alias, answers the same and logs SGLang's deprecation line.
func TestServerInfoPaths(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--served-model-name", "kimi")
	p.waitHealthy()
	const deprecation = "] Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.\n"
	for _, path := range []string{"/server_info", "/get_server_info"} {
		var info map[string]any
		getJSON(t, p.url(path), &info)
		if info["version"] != server.Version || info["tp_size"] != float64(2) || info["served_model_name"] != "kimi" {
			t.Errorf("%s: version %v, tp_size %v, served_model_name %v", path, info["version"], info["tp_size"], info["served_model_name"])
		}
		// The access line follows the handler's own lines in the log.
		want := map[string]int{"/server_info": 0, "/get_server_info": 1}[path]
		if !waitFor(t, 5*time.Second, func() bool { return strings.Contains(p.log.String(), `"GET `+path+` HTTP/1.1" 200 OK`) }) ||
			strings.Count(p.log.String(), deprecation) != want {
			t.Errorf("after %s: the deprecation line logged %d times, want %d", path, strings.Count(p.log.String(), deprecation), want)
		}
	}
}

// TestFlushTimeout: /flush_cache?timeout=N waits up to N seconds for the
// server to go idle instead of refusing at once, as SGLang's; a request
// that outlives the wait is still refused, with the scheduler's reason.
func TestFlushTimeout(t *testing.T) {
	p := startSim(t, nil, append(strings.Fields(simtest.Baseline), "--sim-prefix-cache")...)
	p.waitHealthy()
	// A request that runs until cancelled, and one of about a second.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := func(tokens int) io.Closer {
		b, _ := json.Marshal(chatBody("a long answer", tokens))
		req, _ := http.NewRequestWithContext(ctx, "POST", p.url("/v1/chat/completions"), strings.NewReader(string(b)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(resp.Body).ReadString('\n') // it is running
		go io.Copy(io.Discard, resp.Body)
		return resp.Body
	}
	tests := []struct {
		name    string
		method  string
		query   string
		tokens  int // a request running meanwhile, 0 for none
		code    int
		body    string
		minWait time.Duration
	}{
		{"idle", "POST", "", 0, 200, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n", 0},
		{"idle, GET", "GET", "?timeout=0", 0, 200, "Cache flushed.", 0},
		{"busy, no wait", "POST", "", 1e6, 400, "Cache not flushed because there are pending requests. waiting=0, pending_dp=0, running=1, cur_batch=0", 0},
		{"busy past the wait", "POST", "?timeout=0.3", 1e6, 400, "Cache not flushed because there are pending requests.", 300 * time.Millisecond},
		{"waits for idle", "POST", "?timeout=30", 3000, 200, "Cache flushed.", 0},
		{"negative timeout", "POST", "?timeout=-1", 0, 422, `"type":"greater_than_equal"`, 0},
		{"not a number", "POST", "?timeout=soon", 0, 422, `"type":"float_parsing"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tokens > 0 {
				defer running(tt.tokens).Close()
			}
			req, _ := http.NewRequest(tt.method, p.url("/flush_cache"+tt.query), nil)
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.body) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, b, tt.code, tt.body)
			}
			if took := time.Since(start); took < tt.minWait {
				t.Errorf("answered after %v, before the %v wait", took, tt.minWait)
			}
		})
	}
	cancel()
}
