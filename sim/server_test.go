package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
	"github.com/bakeoff-dev/bakeoff/sim/server"
)

// sseEvent is one parsed `data:` event of a stream.
type sseEvent struct {
	raw  string
	body map[string]any
}

// post sends a completion request and returns the stream's events, or the
// whole JSON answer for a non-streaming request (as one event).
func post(t *testing.T, url string, body map[string]any) (int, []sseEvent) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if stream, _ := body["stream"].(bool); !stream || resp.StatusCode != 200 {
		var m map[string]any
		raw, _ := io.ReadAll(resp.Body)
		json.Unmarshal(raw, &m)
		return resp.StatusCode, []sseEvent{{raw: string(raw), body: m}}
	}
	var evs []sseEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		ev := sseEvent{raw: data}
		if data != "[DONE]" {
			if err := json.Unmarshal([]byte(data), &ev.body); err != nil {
				t.Fatalf("bad event %q: %v", data, err)
			}
		}
		evs = append(evs, ev)
	}
	return resp.StatusCode, evs
}

// tryPost sends a streaming request and reads it to the end; it fails
// unless the stream ended with [DONE].
func tryPost(url string, body map[string]any) error {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if !strings.Contains(string(raw), "data: [DONE]") {
		return fmt.Errorf("stream ended without [DONE] (status %d)", resp.StatusCode)
	}
	return nil
}

// streamText joins the content of a stream and counts content chunks and
// the chunks that carried more than one token.
func streamText(evs []sseEvent) (text string, chunks int, usage map[string]any, done bool) {
	for _, ev := range evs {
		if ev.raw == "[DONE]" {
			done = true
			continue
		}
		if u, ok := ev.body["usage"].(map[string]any); ok {
			usage = u
		}
		choices, _ := ev.body["choices"].([]any)
		for _, c := range choices {
			ch := c.(map[string]any)
			s, _ := ch["text"].(string)
			if d, ok := ch["delta"].(map[string]any); ok {
				s, _ = d["content"].(string)
			}
			if s != "" {
				chunks++
				text += s
			}
		}
	}
	return
}

func chatBody(prompt string, maxTokens int) map[string]any {
	return map[string]any{
		"model": "m", "messages": []any{map[string]any{"role": "user", "content": prompt}},
		"max_tokens": maxTokens, "stream": true, "stream_options": map[string]any{"include_usage": true},
		"temperature": 0, "ignore_eos": true,
	}
}

func TestHealthSequence(t *testing.T) {
	p := startSim(t, nil, "--tp", "2", "--sim-load-time", "150s")
	// 150 s at 100× is 1.5 s of loading: health answers 503 first.
	if !waitFor(t, 5*time.Second, func() bool { return status(p.url("/health")) == 503 }) {
		t.Fatal("/health never answered 503 while loading")
	}
	if got := status(p.url("/health_generate")); got != 503 && got != 200 {
		t.Errorf("/health_generate while loading: %d", got)
	}
	if code, _ := post(t, p.url("/v1/chat/completions"), chatBody("hi", 5)); code != 503 && code != 200 {
		t.Errorf("completion while loading: %d, want 503", code)
	}
	p.waitHealthy()
	if got := status(p.url("/health_generate")); got != 200 {
		t.Errorf("/health_generate when ready: %d", got)
	}
	log := p.log.String()
	order := []string{"server_args=ServerArgs(", "Load weight begin", "Loading safetensors checkpoint shards", "Load weight end",
		"KV Cache is allocated", "Capture cuda graph begin", "Capture cuda graph end. Time elapsed:",
		"The server is fired up and ready to roll!"}
	at := 0
	for _, want := range order {
		i := strings.Index(log[at:], want)
		if i < 0 {
			t.Fatalf("log lacks %q after position %d:\n%s", want, at, log)
		}
		at += i
	}
	// SIGTERM: drain and exit 0; the children follow.
	p.cmd.Process.Signal(sigterm)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Errorf("exit after SIGTERM: %d", code)
	}
	if !strings.Contains(p.log.String(), "SIGTERM received") {
		t.Error("no SIGTERM line in the log")
	}
	if !waitFor(t, 5*time.Second, func() bool { return len(p.liveChildren()) == 0 }) {
		t.Errorf("children outlived the server: %v", p.liveChildren())
	}
}

func TestStreamingAndInfo(t *testing.T) {
	base := startSim(t, nil, append(strings.Fields(simtest.Baseline), "--enable-metrics")...)
	spec := startSim(t, map[string]string{cmdline.SpecV2Env: "1"}, append(strings.Fields(simtest.Topk1), "--served-model-name", "kimi")...)
	wrong := startSim(t, nil, append(strings.Fields(simtest.Topk4), "--sim-fault", "wrong-output")...)
	base.waitHealthy()
	spec.waitHealthy()
	wrong.waitHealthy()

	const n = 60
	texts := map[string]string{}
	for name, p := range map[string]*simProc{"base": base, "spec": spec, "wrong": wrong} {
		code, evs := post(t, p.url("/v1/chat/completions"), chatBody("Explain hash maps.", n))
		if code != 200 {
			t.Fatalf("%s: status %d", name, code)
		}
		text, chunks, usage, done := streamText(evs)
		if !done {
			t.Errorf("%s: no [DONE]", name)
		}
		if usage == nil || usage["completion_tokens"] != float64(n) {
			t.Errorf("%s: usage %v, want completion_tokens %d", name, usage, n)
		}
		last := evs[len(evs)-2].body // the event before [DONE]
		if ch, ok := last["choices"].([]any); !ok || len(ch) != 0 || last["usage"] == nil {
			t.Errorf("%s: the usage chunk must have choices [] and usage: %s", name, evs[len(evs)-2].raw)
		}
		if name == "base" && chunks != n {
			t.Errorf("base: %d content chunks for %d tokens, want one per token", chunks, n)
		}
		if name != "base" && chunks >= n {
			t.Errorf("%s: %d chunks for %d tokens; speculation should carry several tokens per chunk", name, chunks, n)
		}
		texts[name] = text
	}
	if texts["base"] != texts["spec"] {
		t.Errorf("greedy outputs differ between variants:\n%q\n%q", texts["base"], texts["spec"])
	}
	if texts["base"] == texts["wrong"] {
		t.Error("wrong-output produced the same text as the baseline")
	}

	// Without usage requested, no usage chunk; non-streaming has usage.
	body := chatBody("x", 3)
	delete(body, "stream_options")
	_, evs := post(t, base.url("/v1/chat/completions"), body)
	if _, _, usage, _ := streamText(evs); usage != nil {
		t.Errorf("usage chunk without include_usage: %v", usage)
	}
	code, evs := post(t, base.url("/v1/completions"), map[string]any{"prompt": "Once upon", "max_tokens": 7, "temperature": 0, "ignore_eos": true})
	if u, _ := evs[0].body["usage"].(map[string]any); code != 200 || u["completion_tokens"] != float64(7) {
		t.Errorf("non-streaming completion: %d %s", code, evs[0].raw)
	}
	// Without ignore_eos a request may stop early with finish_reason stop.
	body = chatBody("y", 5000)
	body["ignore_eos"] = false
	_, evs = post(t, base.url("/v1/chat/completions"), body)
	if !strings.Contains(evs[len(evs)-3].raw, `"finish_reason":"stop"`) {
		t.Errorf("no stop finish: %s", evs[len(evs)-3].raw)
	}

	// SGLang's native /generate: accept length = completion_tokens / spec_verify_ct.
	code, evs = post(t, spec.url("/generate"), map[string]any{"text": "Once upon",
		"sampling_params": map[string]any{"max_new_tokens": 40, "temperature": 0, "ignore_eos": true}})
	meta, _ := evs[0].body["meta_info"].(map[string]any)
	if code != 200 || meta["completion_tokens"] != float64(40) {
		t.Errorf("/generate: %d %s", code, evs[0].raw)
	} else if v, _ := meta["spec_verify_ct"].(float64); v < 1 || v >= 40 {
		t.Errorf("/generate spec_verify_ct %v, want fewer steps than tokens", meta["spec_verify_ct"])
	}

	// A long speculative request fills a decode log interval.
	if err := tryPost(spec.url("/v1/chat/completions"), chatBody("long", 200)); err != nil {
		t.Fatal(err)
	}
	decodeLine := regexp.MustCompile(`\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP0\] Decode batch, #running-req: \d+, #token: \d+, token usage: \d\.\d\d, ` +
		`accept len: \d\.\d\d, accept rate: \d\.\d\d, cuda graph: True, gen throughput \(token/s\): \d+\.\d\d, #queue-req: \d+\n`)
	if !decodeLine.MatchString(spec.log.String()) {
		t.Errorf("no speculative Decode batch line in the log:\n%s", simtest.Tail(spec.log.String(), 10))
	}

	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	getJSON(t, spec.url("/v1/models"), &models)
	if len(models.Data) != 1 || models.Data[0].ID != "kimi" {
		t.Errorf("/v1/models: %+v", models)
	}
	var info struct {
		Version        string           `json:"version"`
		TPSize         int              `json:"tp_size"`
		InternalStates []map[string]any `json:"internal_states"`
	}
	getJSON(t, spec.url("/server_info"), &info)
	if info.Version != server.Version || info.TPSize != 8 || len(info.InternalStates) != 1 {
		t.Errorf("/server_info: %+v", info)
	} else if _, ok := info.InternalStates[0]["avg_spec_accept_length"]; !ok {
		t.Error("speculative /server_info lacks internal_states[0].avg_spec_accept_length")
	}
	var mi map[string]any
	getJSON(t, base.url("/get_model_info"), &mi)
	if mi["model_path"] != "/data/models/Kimi-K2.5-INT4" {
		t.Errorf("/get_model_info: %v", mi)
	}

	if got := status(spec.url("/metrics")); got != 404 {
		t.Errorf("/metrics without --enable-metrics: %d, want 404", got)
	}
	resp, err := http.Get(base.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"sglang:num_running_reqs{", "sglang:num_queue_reqs{", "sglang:gen_throughput{",
		"sglang:generation_tokens_total{", "# TYPE sglang:time_to_first_token_seconds histogram",
		"sglang:inter_token_latency_seconds_bucket{", "sglang:e2e_request_latency_seconds_count{"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`sglang:generation_tokens_total\{[^}]*\} (\d+)`).FindStringSubmatch(string(raw)); m == nil || m[1] == "0" {
		t.Errorf("generation_tokens_total not counted: %v", m)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// TestSpecCapLogged: a speculative server without --max-running-requests
// warns and reports the cap of 48.
// TestStreamInterval: with --stream-interval 4 the same greedy text arrives
// in about a quarter of the chunks (the first token at once, then every
// fourth decode step, and the last), and usage still counts every token.
func TestStreamInterval(t *testing.T) {
	one := startSim(t, nil, strings.Fields(simtest.Baseline)...)
	four := startSim(t, nil, append(strings.Fields(simtest.Baseline), "--stream-interval", "4")...)
	one.waitHealthy()
	four.waitHealthy()
	const n = 61
	var texts [2]string
	for i, p := range []*simProc{one, four} {
		code, evs := post(t, p.url("/v1/chat/completions"), chatBody("Explain hash maps.", n))
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		text, chunks, usage, done := streamText(evs)
		if !done || usage == nil || usage["completion_tokens"] != float64(n) {
			t.Fatalf("stream %d: done %v, usage %v, want completion_tokens %d", i, done, usage, n)
		}
		want := [2][2]int{{n, n}, {(n-1)/4 + 1, (n-1)/4 + 2}}[i]
		if chunks < want[0] || chunks > want[1] {
			t.Errorf("stream interval %d: %d content chunks for %d tokens, want %d to %d", []int{1, 4}[i], chunks, n, want[0], want[1])
		}
		texts[i] = text
	}
	if texts[0] != texts[1] {
		t.Errorf("the stream interval changed the text:\n%q\n%q", texts[0], texts[1])
	}
}

func TestSpecCapLogged(t *testing.T) {
	p := startSim(t, nil, "--tp", "1", "--speculative-algorithm", "EAGLE3")
	p.waitHealthy()
	if !strings.Contains(p.log.String(), "Max running requests is reset to 48 for speculative decoding") {
		t.Error("no 48-cap warning in the log")
	}
	var info struct {
		MaxRunning int `json:"max_running_requests"`
	}
	getJSON(t, p.url("/server_info"), &info)
	if info.MaxRunning != 48 {
		t.Errorf("max_running_requests %d, want 48", info.MaxRunning)
	}
}
