package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

// The router of a disaggregated (or data-parallel) deployment, as SGLang's
// router (sglang_router, sgl-project/sglang sgl-model-gateway; its command
// line in bindings/python/src/sglang_router/router_args.py, RouterArgs):
//
//	bakeoff sim router --pd-disaggregation --prefill URL [BOOTSTRAP_PORT] \
//	    --decode URL [--prefill … --decode …] [--host H] [--port P] [--policy …]
//	bakeoff sim router --worker-urls URL… [--host H] [--port P]
//
// In PD mode each request goes to one prefill worker and one decode worker
// at once, with bootstrap_host, bootstrap_port and a random 63-bit
// bootstrap_room added; the client gets the decode worker's answer, streamed
// as it comes, and the prefill worker's is read and dropped. Without
// --pd-disaggregation the router sends each request whole to one of
// --worker-urls.

// Router defaults, RouterArgs's.
const (
	DefaultHost   = "0.0.0.0"
	DefaultPort   = 30000
	DefaultPolicy = "cache_aware"
)

const (
	// drainTimeout bounds (wall time) the wait for in-flight requests after
	// SIGTERM, as a server's does.
	drainTimeout = 30 * time.Second
	// routerProg is the router's argparse prog: `python -m
	// sglang_router.launch_router` runs launch_router.py.
	routerProg = "launch_router.py"
	// routerHealthPoll is how often (wall time) the router asks a worker not
	// yet healthy for /health. SGLang's router checks every
	// --worker-startup-check-interval (30 s by default); the sim's workers
	// load in a second or two, so it asks more often.
	routerHealthPoll = 250 * time.Millisecond
	// routerWorkerTimeout bounds (wall time) one health or info call to a
	// worker.
	routerWorkerTimeout = 5 * time.Second
	// routerMaxBody bounds a request body, RouterArgs.max_payload_size.
	routerMaxBody = 512 << 20
)

// routerPolicies are RouterArgs's --policy choices. The sim routes
// round_robin and random as named, and the others (which weigh cache
// affinity and load) to the worker with the fewest requests in flight.
var routerPolicies = []string{"random", "round_robin", "cache_aware", "power_of_two", "manual"}

// Env is what the router process needs from outside.
type Env struct {
	Stdout, Stderr io.Writer
	Now            func() time.Time
}

// Config is a parsed router command line.
type Config struct {
	Host string
	Port int
	PD   bool
	// Prefill are the prefill workers with their bootstrap ports (0: none),
	// Decode the decode workers, Workers the workers of a router without
	// --pd-disaggregation.
	Prefill []Prefill
	Decode  []string
	Workers []string
	Policy  string
	// PrefillPolicy and DecodePolicy override Policy for one role ("").
	PrefillPolicy, DecodePolicy string
}

// Prefill is a --prefill URL [BOOTSTRAP_PORT].
type Prefill struct {
	URL           string
	BootstrapPort int // 0: none
}

// routerOption is one router flag: how many values it takes (-1: one or
// more, -2: any number, 0: none) and what it sets.
type routerOption struct {
	nargs   int
	choices []string
	set     func(c *Config, vals []string) error
}

// routerOptions are the router flags the sim reads or accepts; the ones it
// only accepts (health checks, retries, logging, Prometheus) change nothing.
var routerOptions = map[string]routerOption{
	"--host": {nargs: 1, set: func(c *Config, v []string) error { c.Host = v[0]; return nil }},
	"--port": {nargs: 1, set: func(c *Config, v []string) error {
		n, err := strconv.Atoi(v[0])
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v[0])
		}
		c.Port = n
		return nil
	}},
	"--pd-disaggregation": {set: func(c *Config, _ []string) error { c.PD = true; return nil }},
	"--prefill": {nargs: -1, set: func(c *Config, v []string) error {
		p := Prefill{URL: v[0]}
		switch {
		case len(v) > 2:
			return fmt.Errorf("expected URL [BOOTSTRAP_PORT], got %d values", len(v))
		case len(v) == 2 && strings.ToLower(v[1]) != "none":
			n, err := strconv.Atoi(v[1])
			if err != nil || n <= 0 {
				return fmt.Errorf("invalid bootstrap port: '%s'", v[1])
			}
			p.BootstrapPort = n
		}
		c.Prefill = append(c.Prefill, p)
		return nil
	}},
	"--decode":      {nargs: 1, set: func(c *Config, v []string) error { c.Decode = append(c.Decode, v[0]); return nil }},
	"--worker-urls": {nargs: -2, set: func(c *Config, v []string) error { c.Workers = append(c.Workers, v...); return nil }},
	"--policy": {nargs: 1, choices: routerPolicies, set: func(c *Config, v []string) error {
		c.Policy = v[0]
		return nil
	}},
	"--prefill-policy": {nargs: 1, choices: append(slices.Clone(routerPolicies), "bucket"), set: func(c *Config, v []string) error {
		c.PrefillPolicy = v[0]
		return nil
	}},
	"--decode-policy": {nargs: 1, choices: routerPolicies, set: func(c *Config, v []string) error {
		c.DecodePolicy = v[0]
		return nil
	}},
	"--worker-startup-timeout-secs":   {nargs: 1},
	"--worker-startup-check-interval": {nargs: 1},
	"--request-timeout-secs":          {nargs: 1},
	"--log-level":                     {nargs: 1},
	"--log-dir":                       {nargs: 1},
	"--prometheus-host":               {nargs: 1},
	"--prometheus-port":               {nargs: 1},
	"--model-path":                    {nargs: 1},
	"--tokenizer-path":                {nargs: 1},
	"--disable-health-check":          {},
	"--disable-circuit-breaker":       {},
	"--disable-retries":               {},
}

// routerUsage is the router's short usage, as argparse starts its errors.
var routerUsage = "usage: " + routerProg + " [-h] [--host HOST] [--port PORT] [--pd-disaggregation]\n" +
	"                        [--prefill PREFILL [PREFILL ...]] [--decode URL]\n" +
	"                        [--worker-urls [WORKER_URLS ...]] [--policy {" + strings.Join(routerPolicies, ",") + "}]\n"

// ParseArgs parses a router command line as argparse does for the
// flags above; errors are worded as argparse's.
func ParseArgs(args []string) (*Config, error) {
	c := &Config{Host: DefaultHost, Port: DefaultPort, Policy: DefaultPolicy}
	var extras []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" {
			return nil, cmdline.ErrHelp
		}
		name, val, hasVal := strings.Cut(a, "=")
		opt, ok := routerOptions[name]
		if !ok {
			extras = append(extras, a)
			continue
		}
		var vals []string
		switch {
		case hasVal:
			vals = []string{val}
		case opt.nargs == 1:
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return nil, routerArgError("argument %s: expected one argument", name)
			}
			i++
			vals = []string{args[i]}
		case opt.nargs < 0:
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				vals = append(vals, args[i])
			}
			if opt.nargs == -1 && len(vals) == 0 {
				return nil, routerArgError("argument %s: expected at least one argument", name)
			}
		}
		if opt.choices != nil && !slices.Contains(opt.choices, vals[0]) {
			return nil, routerArgError("argument %s: invalid choice: '%s' (choose from %s)", name, vals[0], quoteAll(opt.choices))
		}
		if opt.set != nil {
			if err := opt.set(c, vals); err != nil {
				return nil, routerArgError("argument %s: %v", name, err)
			}
		}
	}
	if len(extras) > 0 {
		return nil, routerArgError("unrecognized arguments: %s", strings.Join(extras, " "))
	}
	switch {
	case c.PD && (len(c.Prefill) == 0 || len(c.Decode) == 0):
		return nil, routerArgError("PD disaggregation mode requires --prefill and --decode URLs")
	case !c.PD && (len(c.Prefill) > 0 || len(c.Decode) > 0):
		return nil, routerArgError("--prefill and --decode need --pd-disaggregation")
	case !c.PD && len(c.Workers) == 0:
		return nil, routerArgError("no workers: give --worker-urls, or --pd-disaggregation with --prefill and --decode")
	}
	for _, u := range c.allWorkers() {
		if p, err := url.Parse(u.url); err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			return nil, routerArgError("invalid worker URL: '%s'", u.url)
		}
	}
	return c, nil
}

func routerArgError(format string, a ...any) error {
	return &routerError{msg: fmt.Sprintf(format, a...)}
}

// routerError is the router's argparse error: usage, then the message.
type routerError struct{ msg string }

func (e *routerError) Error() string { return routerUsage + routerProg + ": error: " + e.msg }

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// routerWorker is one worker as the router knows it.
type routerWorker struct {
	url           string
	role          string // "prefill", "decode" or "" (a regular worker)
	bootstrapPort int
	healthy       atomic.Bool
	inflight      atomic.Int64
}

// host is the worker's host, what the router sends as bootstrap_host.
func (w *routerWorker) host() string {
	p, _ := url.Parse(w.url)
	return p.Hostname()
}

func (c *Config) allWorkers() []*routerWorker {
	var out []*routerWorker
	for _, p := range c.Prefill {
		out = append(out, &routerWorker{url: strings.TrimSuffix(p.URL, "/"), role: cmdline.DisaggPrefill, bootstrapPort: p.BootstrapPort})
	}
	for _, d := range c.Decode {
		out = append(out, &routerWorker{url: strings.TrimSuffix(d, "/"), role: cmdline.DisaggDecode})
	}
	for _, w := range c.Workers {
		out = append(out, &routerWorker{url: strings.TrimSuffix(w, "/")})
	}
	return out
}

// Router is the router's HTTP face.
type Router struct {
	cfg     *Config
	log     func(format string, a ...any)
	client  *http.Client
	workers []*routerWorker
	prefill []*routerWorker
	decode  []*routerWorker // the decode workers, or the regular ones
	rr      atomic.Uint64
	ready   atomic.Bool

	rngMu sync.Mutex
	rng   *rand.Rand
}

// New builds the router for a parsed command line; log writes one
// line of its log.
func New(cfg *Config, log func(format string, a ...any)) *Router {
	rt := &Router{cfg: cfg, log: log, workers: cfg.allWorkers(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}},
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	for _, w := range rt.workers {
		if w.role == cmdline.DisaggPrefill {
			rt.prefill = append(rt.prefill, w)
		} else {
			rt.decode = append(rt.decode, w)
		}
	}
	return rt
}

// Run is `bakeoff sim router`: parse, serve until ctx ends (cmd ends
// it on SIGTERM or SIGINT), drain. It returns the process's exit status.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	cfg, err := ParseArgs(args)
	if errors.Is(err, cmdline.ErrHelp) {
		fmt.Fprint(env.Stdout, routerUsage+"\nThe simulated SGLang router (bakeoff sim router); docs/SIM.md, Disaggregation.\n")
		return 0
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 2
	}
	var mu sync.Mutex
	logf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(env.Stderr, "%s  INFO smg::server: %s\n", env.Now().Format(sglog.TimeFormat), fmt.Sprintf(format, a...))
	}
	rt := New(cfg, logf)
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s ERROR smg::server: Failed to bind %s: %v\n", env.Now().Format(sglog.TimeFormat), addr, err)
		return 1
	}
	logf("Starting router on %s | mode: %s | policy: %s", addr, rt.mode(), cfg.Policy)
	go rt.watchHealth(ctx)
	hs := &http.Server{Handler: rt.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	select {
	case err := <-serveErr:
		fmt.Fprintf(env.Stderr, "%s ERROR smg::server: serving %s: %v\n", env.Now().Format(sglog.TimeFormat), addr, err)
		return 1
	case <-ctx.Done():
	}
	logf("Received shutdown signal, draining in-flight requests")
	shut, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	hs.Shutdown(shut)
	return 0
}

// mode describes the routing mode as the router's startup line does.
func (rt *Router) mode() string {
	var b strings.Builder
	if !rt.cfg.PD {
		fmt.Fprintf(&b, "Regular { worker_urls: %q }", rt.cfg.Workers)
		return b.String()
	}
	b.WriteString("PrefillDecode { prefill_urls: [")
	for i, p := range rt.cfg.Prefill {
		if i > 0 {
			b.WriteString(", ")
		}
		port := "None"
		if p.BootstrapPort > 0 {
			port = fmt.Sprintf("Some(%d)", p.BootstrapPort)
		}
		fmt.Fprintf(&b, "(%q, %s)", p.URL, port)
	}
	fmt.Fprintf(&b, "], decode_urls: %q }", rt.cfg.Decode)
	return b.String()
}

// watchHealth asks every worker not yet healthy for /health until each has
// answered 200 once; the router is ready from then on.
func (rt *Router) watchHealth(ctx context.Context) {
	for {
		healthy := 0
		for _, w := range rt.workers {
			if !w.healthy.Load() && rt.get(ctx, w, "/health") == nil {
				w.healthy.Store(true)
				rt.log("Worker %s is healthy (%s)", w.url, roleName(w.role))
			}
			if w.healthy.Load() {
				healthy++
			}
		}
		if healthy == len(rt.workers) {
			rt.ready.Store(true)
			rt.log("Workers initialized: %d total, %d healthy", len(rt.workers), healthy)
			return
		}
		if pause.For(ctx, routerHealthPoll) != nil {
			return
		}
	}
}

func roleName(role string) string {
	if role == "" {
		return "regular"
	}
	return role
}

// get asks a worker for a path and returns nil on 200.
func (rt *Router) get(ctx context.Context, w *routerWorker, path string) error {
	ctx, cancel := context.WithTimeout(ctx, routerWorkerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := rt.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s%s: %s", w.url, path, resp.Status)
	}
	return nil
}

// Handler routes the router's HTTP surface, the main port's public routes
// of sgl-model-gateway (src/server.rs at 6614f984, build_app): health,
// readiness and liveness, the model and server info, /engine_metrics, the
// cache flush and the generation calls. It has no /metrics and no
// /server_info: the gateway's own Prometheus metrics are on
// --prometheus-port, which the sim does not serve, and a worker's figures
// are read from the worker, or merged by /engine_metrics. What it has no
// route for is 404, as the gateway's fallback answers.
func (rt *Router) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", rt.health)
	mux.HandleFunc("GET /health_generate", rt.health)
	mux.HandleFunc("GET /readiness", rt.health)
	mux.HandleFunc("GET /liveness", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", rt.forward)
	for _, p := range []string{"/get_model_info", "/get_server_info"} {
		mux.HandleFunc("GET "+p, rt.forwardInfo)
	}
	for _, p := range []string{"/v1/tokenize", "/tokenize"} {
		mux.HandleFunc("POST "+p, rt.forward)
	}
	mux.HandleFunc("GET /engine_metrics", rt.engineMetrics)
	mux.HandleFunc("POST /flush_cache", rt.flushCache)
	for _, p := range []string{"/v1/chat/completions", "/v1/completions", "/generate"} {
		mux.HandleFunc("POST "+p, rt.route)
	}
	return mux
}

// health is 200 once every worker has been healthy, 503 before.
func (rt *Router) health(w http.ResponseWriter, _ *http.Request) {
	if !rt.ready.Load() {
		writeError(w, http.StatusServiceUnavailable, "workers are not ready")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// forward answers a call that generates nothing (the models, the
// tokenizer) with the first decode (or regular) worker's answer.
func (rt *Router) forward(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r.Body, routerMaxBody)); err != nil {
			writeError(w, http.StatusBadRequest, "reading the request: "+err.Error())
			return
		}
	}
	resp, err := rt.send(r.Context(), rt.decode[0], r.Method, r.URL.RequestURI(), body)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer resp.Body.Close()
	relay(w, resp)
}

// forwardInfo answers the model and server info with one worker's: under
// --pd-disaggregation the first prefill worker's (the gateway's PDRouter
// proxies get_server_info and get_model_info to its first prefill worker,
// src/routers/http/pd_router.rs at 004dcda2), which does not speculate, so
// a decode worker's accept length is not in the router's server info;
// otherwise the first worker's.
func (rt *Router) forwardInfo(w http.ResponseWriter, r *http.Request) {
	wk := rt.decode[0]
	if len(rt.prefill) > 0 {
		wk = rt.prefill[0]
	}
	resp, err := rt.send(r.Context(), wk, r.Method, r.URL.RequestURI(), nil)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer resp.Body.Close()
	relay(w, resp)
}

// flushCache flushes every worker; the first refusal is the answer.
func (rt *Router) flushCache(w http.ResponseWriter, r *http.Request) {
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answers := make([]answer, len(rt.workers))
	var wg sync.WaitGroup
	for i, wk := range rt.workers {
		wg.Go(func() {
			resp, err := rt.send(r.Context(), wk, r.Method, r.URL.RequestURI(), nil)
			if err != nil {
				answers[i].err = err
				return
			}
			defer resp.Body.Close()
			answers[i].status = resp.StatusCode
			answers[i].body, answers[i].err = io.ReadAll(resp.Body)
		})
	}
	wg.Wait()
	for i, a := range answers {
		switch {
		case a.err != nil:
			writeError(w, http.StatusBadGateway, fmt.Sprintf("flushing %s: %v", rt.workers[i].url, a.err))
			return
		case a.status != http.StatusOK:
			w.WriteHeader(a.status)
			w.Write(a.body)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	w.Write(answers[0].body)
}

// send makes one call to a worker.
func (rt *Router) send(ctx context.Context, wk *routerWorker, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, wk.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rt.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: %w", method, wk.url, path, err)
	}
	return resp, nil
}

// pick chooses a worker of a role by its policy.
func (rt *Router) pick(ws []*routerWorker, policy string) *routerWorker {
	if len(ws) == 1 {
		return ws[0]
	}
	switch policy {
	case "round_robin":
		return ws[int(rt.rr.Add(1)-1)%len(ws)]
	case "random":
		rt.rngMu.Lock()
		defer rt.rngMu.Unlock()
		return ws[rt.rng.IntN(len(ws))]
	}
	best := ws[0]
	for _, w := range ws[1:] {
		if w.inflight.Load() < best.inflight.Load() {
			best = w
		}
	}
	return best
}

func (rt *Router) policy(role string) string {
	switch {
	case role == cmdline.DisaggPrefill && rt.cfg.PrefillPolicy != "":
		return rt.cfg.PrefillPolicy
	case role == cmdline.DisaggDecode && rt.cfg.DecodePolicy != "":
		return rt.cfg.DecodePolicy
	}
	return rt.cfg.Policy
}

// route sends a generation request on: whole to one worker, or in PD mode
// to a prefill and a decode worker at once, the client getting the decode
// worker's answer as it streams.
func (rt *Router) route(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, routerMaxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the request: "+err.Error())
		return
	}
	path := r.URL.RequestURI()
	dec := rt.pick(rt.decode, rt.policy(cmdline.DisaggDecode))
	if !rt.cfg.PD {
		rt.relayCall(w, r.Context(), dec, path, body)
		return
	}
	req := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	pre := rt.pick(rt.prefill, rt.policy(cmdline.DisaggPrefill))
	rt.rngMu.Lock()
	room := rt.rng.Uint64() &^ (1 << 63)
	rt.rngMu.Unlock()
	req["bootstrap_host"] = pre.host()
	req["bootstrap_port"] = nil
	if pre.bootstrapPort > 0 {
		req["bootstrap_port"] = pre.bootstrapPort
	}
	req["bootstrap_room"] = room
	body, _ = json.Marshal(req)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The prefill worker's answer is read and dropped; a refusal that comes
	// before the decode worker has answered ends its wait for a KV cache
	// that will not come, and is the client's answer instead.
	var (
		mu       sync.Mutex
		answered bool // the decode worker's answer is the client's
		refusal  struct {
			status int
			body   []byte
		}
	)
	refuse := func(status int, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if !answered {
			refusal.status, refusal.body = status, body
			cancel()
		}
	}
	prefillDone := make(chan struct{})
	go func() {
		defer close(prefillDone)
		pre.inflight.Add(1)
		defer pre.inflight.Add(-1)
		resp, err := rt.send(ctx, pre, http.MethodPost, path, body)
		if err != nil {
			refuse(http.StatusBadGateway, errorBody(http.StatusBadGateway, err.Error()))
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			refuse(resp.StatusCode, b)
		}
	}()
	dec.inflight.Add(1)
	defer dec.inflight.Add(-1)
	resp, err := rt.send(ctx, dec, http.MethodPost, path, body)
	if err == nil && resp.StatusCode != http.StatusOK {
		// A decode worker's failure is most often the prefill's (the KV
		// cache it waited for never came): the prefill's refusal, when there
		// is one, is the cause and the client's answer, whichever of the
		// two came back first.
		<-prefillDone
		mu.Lock()
		answered = true
		status, refused := refusal.status, refusal.body
		mu.Unlock()
		defer resp.Body.Close()
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(refused)
			return
		}
		relay(w, resp)
		return
	}
	mu.Lock()
	if err == nil && refusal.status != 0 {
		// The prefill's refusal came first: the decode's answer may be cut.
		resp.Body.Close()
		err = context.Canceled
	}
	answered = err == nil
	mu.Unlock()
	if err != nil {
		<-prefillDone
		if refusal.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refusal.status)
			w.Write(refusal.body)
			return
		}
		if r.Context().Err() == nil {
			writeError(w, http.StatusBadGateway, err.Error())
		}
		return
	}
	defer resp.Body.Close()
	relay(w, resp)
}

// relayCall sends the request whole to one worker and relays its answer.
func (rt *Router) relayCall(w http.ResponseWriter, ctx context.Context, wk *routerWorker, path string, body []byte) {
	wk.inflight.Add(1)
	defer wk.inflight.Add(-1)
	resp, err := rt.send(ctx, wk, http.MethodPost, path, body)
	if err != nil {
		if ctx.Err() == nil {
			writeError(w, http.StatusBadGateway, err.Error())
		}
		return
	}
	defer resp.Body.Close()
	relay(w, resp)
}

// relay copies a worker's answer to the client, flushing every read so that
// a stream's chunks go out as they come.
func relay(w http.ResponseWriter, resp *http.Response) {
	for _, k := range []string{"Content-Type", "Cache-Control"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

func errorBody(code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "code": code})
	return b
}

// engineMetrics serves every worker's /metrics as one exposition, each
// sample labelled with the worker it came from (worker_addr), as the
// gateway's /engine_metrics merges its workers' (src/core/
// worker_manager.rs, get_engine_metrics, at f47e04e0). Summed over workers,
// a disaggregated request's prompt tokens count twice: once on its prefill
// worker, once on its decode worker. An error when no worker serves
// metrics (none runs with --enable-metrics), as the gateway's "All backend
// requests failed".
func (rt *Router) engineMetrics(w http.ResponseWriter, r *http.Request) {
	fams := map[string]*dto.MetricFamily{}
	served := false
	for _, wk := range rt.workers {
		resp, err := rt.send(r.Context(), wk, http.MethodGet, "/metrics", nil)
		if err != nil {
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		served = true
		parser := expfmt.NewTextParser(model.UTF8Validation)
		parsed, _ := parser.TextToMetricFamilies(bytes.NewReader(body))
		for name, f := range parsed {
			for _, m := range f.Metric {
				m.Label = append(m.Label, labelPair("worker_addr", wk.url))
			}
			if have, ok := fams[name]; !ok {
				fams[name] = f
			} else if have.GetType() == f.GetType() {
				have.Metric = append(have.Metric, f.Metric...)
			}
		}
	}
	if !served {
		writeError(w, http.StatusServiceUnavailable, "All backend requests failed")
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		expfmt.MetricFamilyToText(w, fams[name])
	}
}

func labelPair(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: &name, Value: &value}
}

// writeError answers an error as the sim's servers do (an OpenAI error
// object).
func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "code": code})
}
