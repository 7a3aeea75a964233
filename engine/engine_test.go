package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/loadgen"
)

func profile(t *testing.T, name string) *engine.Profile {
	t.Helper()
	p := engine.Lookup(name)
	if p == nil {
		t.Fatalf("no profile %q", name)
	}
	return p
}

// args is a scenario's flags for the checks.
type args map[string]string

func (a args) ArgValue(k string) (string, bool) { v, ok := a[k]; return v, ok }

func TestNames(t *testing.T) {
	if got := engine.NameList(); got != "generic, llamacpp, sglang, trtllm or vllm" {
		t.Errorf("NameList() = %q", got)
	}
	for _, n := range engine.Names() {
		p := engine.Lookup(n)
		if p.Name != n || p.Title == "" || p.HealthPath == "" || len(p.Fatal) == 0 {
			t.Errorf("profile %s is incomplete: %+v", n, p)
		}
		if (p.Reset == nil) == (p.NoReset == "") {
			t.Errorf("profile %s: want either a reset call or the reason it has none", n)
		}
	}
}

// TestLaunchGolden pins every engine's default launch line, and that
// engine.command replaces only the launcher.
func TestLaunchGolden(t *testing.T) {
	var b strings.Builder
	for _, n := range engine.Names() {
		p := engine.Lookup(n)
		argv, err := p.LaunchArgv(nil, "/opt/venv/bin/python", "/models/M", "127.0.0.1", 30000)
		if err != nil {
			fmt.Fprintf(&b, "%-9s error: %v\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "%-9s %s\n", n, strings.Join(argv, " "))
		custom, err := p.LaunchArgv([]string{"/bin/bakeoff", "sim"}, "python3", "/models/M", "127.0.0.1", 30000)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%-9s %s\n", "", strings.Join(custom, " "))
	}
	golden.Check(t, "testdata/launch.golden", []byte(b.String()))
}

func TestReserved(t *testing.T) {
	for _, n := range engine.Names() {
		p := engine.Lookup(n)
		if p.Fixed == nil {
			continue
		}
		// Every flag the fixed part sets must be reserved, so a scenario
		// cannot set it a second time.
		for _, w := range p.Fixed("M", "H", 1) {
			if k, ok := strings.CutPrefix(w, "--"); ok {
				if _, res := p.Reserved[k]; !res {
					t.Errorf("%s: fixed flag --%s is not reserved", n, k)
				}
			}
		}
	}
}

// TestReady: 200 is ready for every engine; 503 (loading, on every engine
// here: llama.cpp's "Loading model", SGLang's starting or draining) never
// is; other answers only after the ready line.
func TestReady(t *testing.T) {
	tests := []struct {
		status    int
		readySeen bool
		want      bool
	}{
		{200, false, true}, {503, false, false}, {503, true, false},
		{404, false, false}, {404, true, true}, {0, true, false}, {500, true, true},
	}
	for _, n := range engine.Names() {
		p := engine.Lookup(n)
		for _, tt := range tests {
			if got := p.Ready(tt.status, tt.readySeen); got != tt.want {
				t.Errorf("%s: Ready(%d, %v) = %v, want %v", n, tt.status, tt.readySeen, got, tt.want)
			}
		}
	}
	for name, line := range map[string]string{
		engine.SGLang: "[2026-11-30 02:00:00] The server is fired up and ready to roll!",
		engine.VLLM:   "INFO:     Application startup complete.",
	} {
		if p := profile(t, name); p.ReadyLine == "" || !strings.Contains(line, p.ReadyLine) {
			t.Errorf("%s: ready line %q not in %q", name, p.ReadyLine, line)
		}
	}
}

// TestFatal: each engine's real failure lines are caught, and ordinary
// loading lines are not.
func TestFatal(t *testing.T) {
	tests := []struct {
		engine, line string
		fatal        bool
	}{
		{engine.SGLang, "Traceback (most recent call last):", true},
		{engine.SGLang, "[2026-11-30 02:00:00 TP0] Scheduler hit an exception: Traceback", true},
		{engine.SGLang, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", true},
		{engine.SGLang, "launch_server.py: error: unrecognized arguments: --bogus", true},
		{engine.SGLang, "Capture cuda graph begin. This can take up to several minutes.", false},
		{engine.VLLM, "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}", true},
		{engine.VLLM, "INFO 11-30 02:00:00 [loader.py:458] Loading weights took 12.3 seconds", false},
		{engine.LlamaCpp, "llama_model_load: error loading model: unknown model architecture: 'x'", true},
		{engine.LlamaCpp, "srv  llama_server: exiting due to model loading error", true},
		{engine.LlamaCpp, "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080", true},
		{engine.LlamaCpp, "error: invalid argument: --bogus", true},
		{engine.LlamaCpp, "srv  load_model: loading model '/models/M.gguf'", false},
		{engine.TRTLLM, "Traceback (most recent call last):", true},
		{engine.TRTLLM, "[TensorRT-LLM][INFO] Loaded engine", false},
		{engine.Generic, "OSError: [Errno 98] Address already in use", true},
	}
	for _, tt := range tests {
		got := profile(t, tt.engine).FatalLine(tt.line)
		if (got != "") != tt.fatal {
			t.Errorf("%s: FatalLine(%q) = %q, want fatal %v", tt.engine, tt.line, got, tt.fatal)
		}
	}
}

func TestSpeculative(t *testing.T) {
	tests := []struct {
		engine string
		args   args
		want   bool
	}{
		{engine.SGLang, args{"speculative-algorithm": "EAGLE3"}, true},
		{engine.SGLang, args{"speculative-config": `{"method":"eagle3"}`}, false},
		{engine.SGLang, args{"tp": "8"}, false},
		{engine.VLLM, args{"speculative-config": `{"method":"eagle3","num_speculative_tokens":3}`}, true},
		{engine.VLLM, args{"speculative-algorithm": "EAGLE3"}, false},
		{engine.LlamaCpp, args{"model-draft": "/m/d.gguf", "spec-type": "draft-simple"}, true},
		{engine.LlamaCpp, args{"model-draft": "/m/d.gguf", "spec-type": "none"}, false},
		{engine.LlamaCpp, args{"model-draft": "/m/d.gguf"}, true}, // older builds
		// --spec-draft-model is the flag's name now, -md and --model-draft
		// its aliases (common/arg.cpp; llama-server --help at 5eca4e3ca).
		{engine.LlamaCpp, args{"spec-draft-model": "/m/d.gguf", "spec-type": "draft-simple"}, true},
		{engine.LlamaCpp, args{"spec-draft-model": "/m/d.gguf"}, true},
		{engine.LlamaCpp, args{"md": "/m/d.gguf"}, true},
		{engine.LlamaCpp, args{"spec-draft-model": "/m/d.gguf", "spec-type": "none"}, false},
		{engine.LlamaCpp, args{"spec-type": "ngram-mod"}, true},
		{engine.LlamaCpp, args{"parallel": "8"}, false},
		{engine.TRTLLM, args{"extra_llm_api_options": "spec.yaml"}, false}, // the YAML is not read
		{engine.Generic, args{"speculative-algorithm": "EAGLE3"}, false},
	}
	for _, tt := range tests {
		if got := profile(t, tt.engine).IsSpeculative(tt.args); got != tt.want {
			t.Errorf("%s %v: speculative %v, want %v", tt.engine, tt.args, got, tt.want)
		}
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		engine, file, version string
		accept                float64
	}{
		{engine.SGLang, "sglang-server-info.json", "0.5.9", 2.64},
		{engine.VLLM, "vllm-version.json", "0.11.0", 0},
		{engine.LlamaCpp, "llamacpp-props.json", "b6500-1f2e3d4c", 0},
		// A build made outside a git checkout (cmake's build-info without git).
		{engine.LlamaCpp, "llamacpp-props-unversioned.json", `unknown (build_info "b0-unknown")`, 0},
		{engine.TRTLLM, "trtllm-version.json", "1.1.0", 0},
	}
	for _, tt := range tests {
		p := profile(t, tt.engine)
		body, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		in := p.Info.Parse(body)
		if in.Version != tt.version {
			t.Errorf("%s: version %q, want %q", tt.engine, in.Version, tt.version)
		}
		if (in.AcceptLength != nil) != (tt.accept != 0) || in.AcceptLength != nil && *in.AcceptLength != tt.accept {
			t.Errorf("%s: accept length %v, want %v", tt.engine, in.AcceptLength, tt.accept)
		}
		if got := p.Info.Parse([]byte("<html>not json</html>")); got.Version != "" || got.AcceptLength != nil {
			t.Errorf("%s: garbage parsed as %+v", tt.engine, got)
		}
	}
	// SGLang's call is /server_info; /get_server_info, its deprecated
	// alias, is what builds from before it have.
	if got := fmt.Sprint(profile(t, engine.SGLang).Info.Paths()); got != "[/server_info /get_server_info]" {
		t.Errorf("sglang info paths %s, want /server_info, then /get_server_info", got)
	}
	if profile(t, engine.Generic).Info != nil {
		t.Error("generic has an info call: it knows no engine's")
	}
}

func metrics(t *testing.T, file string) map[string]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := loadgen.ParseMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAcceptFromScrapes(t *testing.T) {
	sg := metrics(t, "sglang-metrics.prom")
	sb, sa := metrics(t, "sglang-metrics-before.prom"), metrics(t, "sglang-metrics-after.prom")
	vb, va := metrics(t, "vllm-metrics-before.prom"), metrics(t, "vllm-metrics-after.prom")
	lb, la := metrics(t, "llamacpp-metrics-before.prom"), metrics(t, "llamacpp-metrics-after.prom")
	tests := []struct {
		name, engine string
		s            engine.Scrapes
		want         float64
		source       string
	}{
		// 24,920 tokens over 10,000 verify steps.
		{"sglang counters", engine.SGLang, engine.Scrapes{Before: sb, After: sa}, 2.492, engine.SourceSGLangCounters},
		// The gauges over the last 40 batches are never a level's figure.
		{"sglang gauge only", engine.SGLang, engine.Scrapes{Before: sg, Mid: sg, After: sg}, 0, ""},
		{"sglang counters went down", engine.SGLang, engine.Scrapes{Before: sa, After: sb}, 0, ""},
		{"sglang no before", engine.SGLang, engine.Scrapes{After: sa}, 0, ""},
		{"sglang nothing", engine.SGLang, engine.Scrapes{}, 0, ""},
		// 1 + 720 accepted / 400 drafts.
		{"vllm counters", engine.VLLM, engine.Scrapes{Before: vb, After: va}, 2.8, engine.SourceVLLMCounters},
		{"vllm no delta", engine.VLLM, engine.Scrapes{Before: vb, After: vb}, 0, ""},
		{"vllm no before", engine.VLLM, engine.Scrapes{After: va}, 0, ""},
		{"generic reads vllm", engine.Generic, engine.Scrapes{Before: vb, After: va}, 2.8, engine.SourceVLLMCounters},
		{"generic reads sglang", engine.Generic, engine.Scrapes{Before: sb, After: sa}, 2.492, engine.SourceSGLangCounters},
		// 1 + 1,400 accepted / 1,000 drafts (verification steps), PR #26389's counters.
		{"llamacpp counters", engine.LlamaCpp, engine.Scrapes{Before: lb, After: la}, 2.4, engine.SourceLlamaCppCounters},
		{"llamacpp before PR 26389", engine.LlamaCpp, engine.Scrapes{Before: sb, After: sa}, 0, ""},
		{"llamacpp no delta", engine.LlamaCpp, engine.Scrapes{Before: lb, After: lb}, 0, ""},
		{"generic reads llamacpp", engine.Generic, engine.Scrapes{Before: lb, After: la}, 2.4, engine.SourceLlamaCppCounters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, src := profile(t, tt.engine).Accept(tt.s)
			if src != tt.source || abs(got-tt.want) > 1e-9 {
				t.Errorf("accept = %v from %q, want %v from %q", got, src, tt.want, tt.source)
			}
		})
	}
	// TensorRT-LLM's scrapes are what the iterations since the last one
	// summed (TestParseIterationStats); Prometheus counters mean nothing to
	// it.
	if got, src := profile(t, engine.TRTLLM).Accept(engine.Scrapes{Before: sb, After: sa}); src != "" {
		t.Errorf("trtllm reads %v from SGLang's counters (%q)", got, src)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// resetServer records the calls it gets and answers each path from
// answers (status codes in order; the last repeats).
type resetServer struct {
	mu      sync.Mutex
	calls   []string
	answers map[string][]int
	bodies  map[string]string
}

func (rs *resetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.RequestURI()
	rs.mu.Lock()
	rs.calls = append(rs.calls, key)
	st, ok := rs.answers[key]
	status := http.StatusNotFound
	if ok {
		status = st[0]
		if len(st) > 1 {
			rs.answers[key] = st[1:]
		}
	}
	body := rs.bodies[key]
	rs.mu.Unlock()
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func TestReset(t *testing.T) {
	props, err := os.ReadFile(filepath.Join("testdata", "llamacpp-props.json"))
	if err != nil {
		t.Fatal(err)
	}
	erase := func(status int) map[string][]int {
		m := map[string][]int{"GET /props": {200}}
		for i := range 4 {
			m[fmt.Sprintf("POST /slots/%d?action=erase", i)] = []int{status}
		}
		return m
	}
	tests := []struct {
		name, engine string
		answers      map[string][]int
		want         string // what the reset says it did
		noReset      bool   // the server has no such call
		failed       bool
		calls        int
		bodies       map[string]string // answers' bodies, by call
	}{
		// ?timeout= asks SGLang to wait for idle rather than refuse (PR #21413).
		{"sglang flush", engine.SGLang, map[string][]int{"POST /flush_cache?timeout=20": {200}}, "POST /flush_cache?timeout=20", false, false, 1, nil},
		// A build that ignores the parameter refuses while requests run (and
		// one that waited out the timeout answers 400 too): tried again.
		{"sglang busy then flushed", engine.SGLang, map[string][]int{"POST /flush_cache?timeout=20": {400, 200}}, "POST /flush_cache?timeout=20", false, false, 2, nil},
		{"sglang always busy", engine.SGLang, map[string][]int{"POST /flush_cache?timeout=20": {400}}, "", false, true, 3, nil},
		{"vllm dev mode", engine.VLLM, map[string][]int{"POST /reset_prefix_cache": {200}}, "POST /reset_prefix_cache", false, false, 1, nil},
		{"vllm without dev mode", engine.VLLM, nil, "", true, false, 1, nil},
		// vLLM answers 200 {"success": false} while blocks are held
		// (vllm/frontend/entrypoints/serve/dev/cache/api_router.py): not
		// done, tried again, then a failure.
		{"vllm keeps refusing", engine.VLLM, map[string][]int{"POST /reset_prefix_cache": {200}}, "", false, true, 3,
			map[string]string{"POST /reset_prefix_cache": `{"success":false}`}},
		{"vllm says it reset", engine.VLLM, map[string][]int{"POST /reset_prefix_cache": {200}}, "POST /reset_prefix_cache", false, false, 1,
			map[string]string{"POST /reset_prefix_cache": `{"success":true}`}},
		{"llamacpp erases every slot", engine.LlamaCpp, erase(200), "POST /slots/{0..3}?action=erase", false, false, 5, nil},
		{"llamacpp without slot-save-path", engine.LlamaCpp, erase(501), "", true, false, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bodies := map[string]string{"GET /props": string(props)}
			for k, v := range tt.bodies {
				bodies[k] = v
			}
			rs := &resetServer{answers: tt.answers, bodies: bodies}
			srv := httptest.NewServer(rs)
			defer srv.Close()
			did, err := profile(t, tt.engine).Reset(context.Background(), srv.Client(), srv.URL, "")
			var nr *engine.NoResetError
			switch {
			case tt.noReset && !errors.As(err, &nr):
				t.Fatalf("err = %v, want NoResetError", err)
			case tt.failed && (err == nil || errors.As(err, &nr)):
				t.Fatalf("err = %v, want a failure", err)
			case !tt.noReset && !tt.failed && err != nil:
				t.Fatal(err)
			}
			if did != tt.want {
				t.Errorf("reset says %q, want %q", did, tt.want)
			}
			if len(rs.calls) != tt.calls {
				t.Errorf("calls %v, want %d", rs.calls, tt.calls)
			}
		})
	}
	for _, n := range []string{engine.TRTLLM, engine.Generic} {
		if p := profile(t, n); p.Reset != nil || p.NoReset == "" {
			t.Errorf("%s: want no reset, with a reason", n)
		}
	}
}

func TestResetSendsAPIKey(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { auth = r.Header.Get("Authorization") }))
	defer srv.Close()
	if _, err := profile(t, engine.SGLang).Reset(context.Background(), srv.Client(), srv.URL, "k"); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer k" {
		t.Errorf("Authorization %q", auth)
	}
}

func TestWarnings(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		name, engine string
		args         args
		env          map[string]string
		maxLevel     int
		unique       bool
		want         []string // fragments, one per warning, in order
	}{
		{"sglang spec without max-running", engine.SGLang, args{"speculative-algorithm": "EAGLE3"}, nil, 64, false,
			[]string{"caps running requests at 48"}},
		{"sglang spec capped below 48 is fine", engine.SGLang, args{"speculative-algorithm": "EAGLE3"}, nil, 48, false, nil},
		// speculative_hook.py: the variable is gone and V2 always runs,
		// topk > 1 included, so there is nothing left to refuse about topk.
		{"sglang spec v2 variable", engine.SGLang, args{"speculative-algorithm": "EAGLE3", "max-running-requests": "256", "speculative-eagle-topk": "4"},
			map[string]string{"SGLANG_ENABLE_SPEC_V2": "1"}, 64, false, []string{"SGLANG_ENABLE_SPEC_V2=1 does nothing on current SGLang"}},
		{"sglang topk 4 on the V2 worker", engine.SGLang, args{"speculative-algorithm": "EAGLE3", "max-running-requests": "256", "speculative-eagle-topk": "4"},
			nil, 64, false, nil},
		{"sglang deprecated fusion flag", engine.SGLang, args{"tp": "8", "enable-flashinfer-allreduce-fusion": ""}, nil, 64, false,
			[]string{"enable-flashinfer-allreduce-fusion is deprecated"}},
		{"sglang fusion backend", engine.SGLang, args{"tp": "8", "flashinfer-allreduce-fusion-backend": "auto"}, nil, 64, false, nil},
		{"sglang topk 1 draft tokens", engine.SGLang, args{"speculative-algorithm": "EAGLE3", "max-running-requests": "256",
			"speculative-eagle-topk": "1", "speculative-num-steps": "3", "speculative-num-draft-tokens": "8"}, nil, 64, false,
			[]string{"num-steps+1 = 4, not 8"}},
		{"vllm max-num-seqs below the top", engine.VLLM, args{"max-num-seqs": "32"}, map[string]string{engine.VLLMDevMode: "1"}, 64, false,
			[]string{"max-num-seqs=32"}},
		{"vllm without dev mode", engine.VLLM, args{}, nil, 8, false, []string{"VLLM_SERVER_DEV_MODE=1"}},
		{"vllm without dev mode, unique prompts", engine.VLLM, args{}, nil, 8, true, nil},
		{"vllm speculative without per-request metrics", engine.VLLM, args{"speculative-config": `{"method":"eagle3"}`}, nil, 8, true,
			[]string{"without per-request-spec-decode-metrics summary"}},
		{"vllm speculative with per-request metrics off", engine.VLLM, args{"speculative-config": `{"method":"eagle3"}`,
			"per-request-spec-decode-metrics": "none"}, nil, 8, true, []string{"per-request-spec-decode-metrics"}},
		{"vllm speculative with per-request metrics", engine.VLLM, args{"speculative-config": `{"method":"eagle3"}`,
			"per-request-spec-decode-metrics": "summary"}, nil, 8, true, nil},
		{"vllm per-request metrics without speculation", engine.VLLM, args{"per-request-spec-decode-metrics": "summary"}, nil, 8, true,
			[]string{"vLLM refuses to start with per-request-spec-decode-metrics"}},
		{"vllm per-request metrics none without speculation", engine.VLLM, args{"per-request-spec-decode-metrics": "none"}, nil, 8, true, nil},
		{"llamacpp spec-draft-model without spec-type", engine.LlamaCpp, args{"parallel": "8", "spec-draft-model": "/d.gguf"}, nil, 8, true,
			[]string{"spec-draft-model without spec-type"}},
		{"llamacpp parallel below the top", engine.LlamaCpp, args{"parallel": "4", "slot-save-path": "/tmp/s", "cache-ram": "0"}, nil, 8, false,
			[]string{"parallel=4"}},
		{"llamacpp parallel unset", engine.LlamaCpp, args{}, nil, 8, true, []string{"parallel is unset"}},
		{"llamacpp ctx-size shared", engine.LlamaCpp, args{"parallel": "8", "ctx-size": "1024"}, nil, 8, true,
			[]string{"ctx-size 1024 is shared by 8 slots, 128 tokens each"}},
		{"llamacpp draft without spec-type", engine.LlamaCpp, args{"parallel": "8", "model-draft": "/d.gguf"}, nil, 8, true,
			[]string{"model-draft without spec-type"}},
		{"llamacpp cache not clearable", engine.LlamaCpp, args{"parallel": "8"}, nil, 8, false,
			[]string{"slot-save-path", "host-RAM prompt cache"}},
		{"llamacpp clean", engine.LlamaCpp, args{"parallel": "8", "ctx-size": "8192", "slot-save-path": "/tmp/s", "cache-ram": "0"}, nil, 8, false, nil},
		{"trtllm unset batch", engine.TRTLLM, args{}, nil, 8, true, []string{"max_batch_size is unset"}},
		{"trtllm small batch, no reset", engine.TRTLLM, args{"max_batch_size": "4"}, nil, 8, false,
			[]string{"max_batch_size=4", "cannot be cleared"}},
		{"generic", engine.Generic, args{}, nil, 500, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := profile(t, tt.engine).Warnings(engine.Setup{Scenario: "s", Args: tt.args, Env: env(tt.env),
				MaxLevel: tt.maxLevel, MaxTokens: 200, UniquePrompts: tt.unique})
			if len(ws) != len(tt.want) {
				t.Fatalf("warnings %+v, want %d", ws, len(tt.want))
			}
			for i, w := range ws {
				if !strings.Contains(w.Text, tt.want[i]) || !strings.HasPrefix(w.Text, "scenario s: ") {
					t.Errorf("warning %q, want it to contain %q", w.Text, tt.want[i])
				}
			}
		})
	}
}

// TestRefusals: the settings an engine refuses at start are marked so, and
// validation fails on them rather than warns.
func TestRefusals(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for _, tt := range []struct {
		name   string
		args   args
		refuse bool
	}{
		// vllm/config/vllm.py raises ValueError at start.
		{"per-request metrics, no speculation", args{"per-request-spec-decode-metrics": "summary"}, true},
		{"per-request metrics with speculation", args{"per-request-spec-decode-metrics": "detailed", "speculative-config": `{"method":"ngram"}`}, false},
		// Without the flag a speculative scenario is only warned.
		{"speculation without per-request metrics", args{"speculative-config": `{"method":"ngram"}`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refused := false
			for _, w := range profile(t, engine.VLLM).Warnings(engine.Setup{Scenario: "s", Args: tt.args, Env: none, MaxLevel: 8, UniquePrompts: true}) {
				if w.Refuse {
					refused = true
					if w.Arg != engine.VLLMPerRequestSpecFlag {
						t.Errorf("refusal points at %q, want the flag", w.Arg)
					}
				}
			}
			if refused != tt.refuse {
				t.Errorf("refused %v, want %v", refused, tt.refuse)
			}
		})
	}
}

// TestWarningsInCampaign: the checks that look past the scenario itself:
// at the baseline it is measured against, or into the engine's own
// configuration file.
func TestWarningsInCampaign(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	files := map[string]string{
		"/cfg/perf.yaml":  "return_perf_metrics: true\nenable_iter_perf_stats: true\nspeculative_config:\n  decoding_type: Eagle\n",
		"/cfg/stats.yaml": "enable_iter_perf_stats: true\n",
	}
	read := func(p string) ([]byte, error) {
		if b, ok := files[p]; ok {
			return []byte(b), nil
		}
		return nil, os.ErrNotExist
	}
	fused := args{"tp": "8", "flashinfer-allreduce-fusion-backend": "auto"}
	for _, tt := range []struct {
		name, engine string
		setup        engine.Setup
		want         []string
	}{
		// arg_groups/overrides.py turns fusion on by itself on SM90/SM10x:
		// dropping the baseline's flag does not turn it off.
		{"sglang fusion dropped", engine.SGLang, engine.Setup{Args: args{"tp": "8"}, BaselineArgs: fused},
			[]string{"leaving out the baseline's fusion flag"}},
		{"sglang fusion dropped from the old flag", engine.SGLang, engine.Setup{Args: args{"tp": "8"},
			BaselineArgs: args{"tp": "8", "enable-flashinfer-allreduce-fusion": ""}}, []string{"leaving out the baseline's fusion flag"}},
		{"sglang fusion forced off", engine.SGLang, engine.Setup{Args: args{"tp": "8", "enforce-disable-flashinfer-allreduce-fusion": ""},
			BaselineArgs: fused}, nil},
		{"sglang baseline without fusion", engine.SGLang, engine.Setup{Args: args{"tp": "8"}, BaselineArgs: args{"tp": "8"}}, nil},
		{"sglang the baseline itself", engine.SGLang, engine.Setup{Args: fused, Baseline: true}, nil},
		{"llamacpp baseline may auto-draft", engine.LlamaCpp, engine.Setup{Args: args{"parallel": "8"}, Baseline: true},
			[]string{"set spec-type: none"}},
		{"llamacpp baseline spec-type none", engine.LlamaCpp, engine.Setup{Args: args{"parallel": "8", "spec-type": "none"}, Baseline: true}, nil},
		{"llamacpp variant", engine.LlamaCpp, engine.Setup{Args: args{"parallel": "8"}}, nil},
		{"trtllm perf metrics drain the stats", engine.TRTLLM, engine.Setup{Args: args{"max_batch_size": "8", "extra_llm_api_options": "/cfg/perf.yaml"}, ReadFile: read},
			[]string{"PR #13405"}},
		{"trtllm under --config", engine.TRTLLM, engine.Setup{Args: args{"max_batch_size": "8", "config": "/cfg/perf.yaml"}, ReadFile: read},
			[]string{"PR #13405"}},
		{"trtllm stats alone", engine.TRTLLM, engine.Setup{Args: args{"max_batch_size": "8", "config": "/cfg/stats.yaml"}, ReadFile: read}, nil},
		{"trtllm file not seen", engine.TRTLLM, engine.Setup{Args: args{"max_batch_size": "8", "config": "/elsewhere.yaml"}, ReadFile: read}, nil},
		{"trtllm remote host", engine.TRTLLM, engine.Setup{Args: args{"max_batch_size": "8", "config": "/cfg/perf.yaml"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.setup
			s.Scenario, s.Env, s.MaxLevel, s.MaxTokens, s.UniquePrompts = "s", none, 8, 200, true
			ws := profile(t, tt.engine).Warnings(s)
			if len(ws) != len(tt.want) {
				t.Fatalf("warnings %+v, want %d", ws, len(tt.want))
			}
			for i, w := range ws {
				if !strings.Contains(w.Text, tt.want[i]) || !strings.HasPrefix(w.Text, "scenario s: ") {
					t.Errorf("warning %q, want it to contain %q", w.Text, tt.want[i])
				}
			}
		})
	}
}

// TestGenerationCounterChecked: only a generation counter that grows at
// each step by the tokens generated is set beside the client's tokens;
// llama-server's and SGLang's add a request's tokens when it ends, and a
// generic server's meaning is unknown (docs/ENGINES.md cites each).
func TestGenerationCounterChecked(t *testing.T) {
	for _, tt := range []struct {
		engine  string
		checked bool
	}{{engine.VLLM, true}, {engine.SGLang, false}, {engine.LlamaCpp, false}, {engine.Generic, false}} {
		m := engine.Lookup(tt.engine).Server
		if got := m.GenerationUnchecked == ""; got != tt.checked {
			t.Errorf("%s: checked %v, want %v (%q)", tt.engine, got, tt.checked, m.GenerationUnchecked)
		}
	}
}
