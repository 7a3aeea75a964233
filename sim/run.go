package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/keepalive"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/model"
	"github.com/bakeoff-dev/bakeoff/sim/server"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

const (
	// drainTimeout bounds (wall time) the wait for in-flight requests after
	// SIGTERM.
	drainTimeout = 30 * time.Second
	// drainPoll is how often the drain checks for remaining requests, and
	// drainLogEvery how often it says how many remain.
	drainPoll     = 20 * time.Millisecond
	drainLogEvery = time.Second
)

// ExitError carries the process exit status of a failed server.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// RunOptions is what the server process needs from outside.
type RunOptions struct {
	// Log receives the SGLang-style log (cmd passes stderr).
	Log io.Writer
	// Executable is this binary, re-executed as the scheduler children.
	Executable string
	// Args is the command line after `bakeoff sim`, passed on to children.
	Args []string
	// PID is this process's id: its children watch for it, the fake
	// nvidia-smi reads its activity under it, and it is in the log.
	PID int
	Now func() time.Time
}

// Run is the `bakeoff sim` server process: bind the port, start one
// scheduler child per rank, load, serve until ctx ends (SIGTERM), drain.
// Failures return *ExitError after writing their log.
func Run(ctx context.Context, cfg *cmdline.Config, opt RunOptions) error {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	log := sglog.NewLogger(opt.Log, now)
	seed := uint64(cfg.Sim.Seed)
	if !cfg.Sim.SeedSet {
		seed = uint64(now().UnixNano()) ^ uint64(opt.PID)<<32
	}
	for _, w := range cfg.ParseWarnings {
		log.Raw(w)
	}
	for _, n := range cfg.Notices {
		log.Printf("%s", n)
	}
	log.Printf("%s", cmdline.ServerArgsLine(cfg))
	seedNote := ""
	if cfg.Sim.SeedMix != "" {
		seedNote = " (--sim-seed mixed with " + cfg.Sim.SeedMix + ")"
	}
	if len(cfg.Sim.Faults.Names()) > 0 {
		log.Printf("bakeoff sim: faults %v, speed %gx, seed %d%s", cfg.Sim.Faults.Names(), cfg.Sim.Speed, seed, seedNote)
	} else {
		log.Printf("bakeoff sim: speed %gx, seed %d%s", cfg.Sim.Speed, seed, seedNote)
	}
	var launch *model.Launch
	if n := model.NoiseOf(cfg.Sim); !n.Zero() {
		launch = n.Draw(seed)
		log.Printf("bakeoff sim: launch step-time factor %.4f (sigma %g), drift sigma %g, tau %v (simulated)",
			launch.Factor(), n.Sigma, n.Drift, n.TauOrDefault())
	}
	var host *model.HostDrift
	if cfg.Sim.HostDrift && cfg.Sim.Drift > 0 {
		host = model.NewHostDrift(cfg.Sim.Drift, cfg.Sim.DriftTau, model.HostSeed(cfg.Sim.StateDir))
		log.Printf("bakeoff sim: host drift sigma %g, tau %v (simulated), shared by every server on %s",
			cfg.Sim.Drift, model.LaunchNoise{Tau: cfg.Sim.DriftTau}.TauOrDefault(), cfg.Sim.StateDir)
	}
	if exc, msg := checkConfig(cfg, log); msg != "" {
		log.Raw(sglog.ConfigExceptionTraceback(exc, msg))
		return &ExitError{Code: 1, Err: errors.New(msg)}
	}
	if cfg.FusionRefused() {
		// A scheduler's exception, which ends the server before it serves.
		log.Raw(sglog.FusionTraceback(sglog.Stamp(now, 0)))
		log.Printf("Rank 0 scheduler is dead. Please check if there are relevant logs.")
		return &ExitError{Code: 1, Err: errors.New(cmdline.FusionError)}
	}
	if !cfg.Deploy.Leader() {
		// A node of rank ≥ 1 of a multi-node group serves no API.
		return runFollower(ctx, cfg, opt, log, now)
	}
	ln, err := server.Listen(cfg)
	if err != nil {
		log.Raw(sglog.AddrInUseTraceback(cfg))
		return &ExitError{Code: 1, Err: fmt.Errorf("binding %s: %w", cfg.Addr(), err)}
	}
	defer ln.Close()

	// A multi-node group's schedulers start once every node has joined (in
	// the load, below); a single node's at once.
	if !cfg.Deploy.MultiNode() {
		if err := startChildren(cfg, opt, now()); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
	}
	var kv *server.KVBootstrap
	if cfg.Deploy.Prefill() {
		if kv, err = server.ListenBootstrap(cfg, log); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
		defer kv.Close()
	}

	stats := model.NewStats(cfg.SpecSteps, cfg.TotalTokens())
	engine := model.NewEngine(cfg, log, stats, seed, launch, host, now)
	srv := server.New(cfg, log, stats, engine, kv, seed, now)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	served := ln
	if p := cfg.Sim.Faults.KeepAlive(); p != (keepalive.Policy{}) {
		served = keepalive.New(p).Install(hs, ln)
	}
	go func() { serveErr <- hs.Serve(served) }()
	defer hs.Close()
	log.Raw(fmt.Sprintf("INFO:     Started server process [%d]\nINFO:     Waiting for application startup.\nINFO:     Application startup complete.\nINFO:     Uvicorn running on http://%s (Press CTRL+C to quit)", opt.PID, cfg.Addr()))

	engineCtx, stopEngine := context.WithCancel(context.Background())
	defer stopEngine()
	go engine.Run(engineCtx)
	go gpu.RecordActivity(engineCtx, cfg.Sim.StateDir, opt.PID, cmdline.ServerGPUs(cfg), cfg.Sim.Speed, engine.Busy, now)

	l := &loader{cfg: cfg, log: log, speed: cfg.Sim.Speed, now: now}
	loadCtx := ctx
	var peers *peerGroup
	if cfg.Deploy.MultiNode() {
		peers = newPeerGroup(cfg, log, now, opt.PID)
		defer peers.Close()
		var cancelLoad context.CancelFunc
		loadCtx, cancelLoad = context.WithCancel(ctx)
		defer cancelLoad()
		l.join = func(ctx context.Context) error {
			if err := peers.form(ctx); err != nil {
				return err
			}
			if err := startChildren(cfg, opt, now()); err != nil {
				return err
			}
			// A dead peer leaves this node stuck in its collectives: no
			// more steps, and health fails, until the watchdog ends it.
			peers.failOnLoss(ctx, func() {
				srv.Stall()
				stopEngine()
			})
			go func() {
				select {
				case <-peers.Crashed():
					cancelLoad()
				case <-ctx.Done():
				}
			}()
			return nil
		}
	}
	if err := l.run(loadCtx); err != nil {
		switch {
		case errors.Is(err, errLoadFailed):
			return &ExitError{Code: 1, Err: err}
		case peers.hasCrashed():
			return &ExitError{Code: 1, Err: errPeerLost}
		}
		return nil // stopped while loading
	}
	log.Raw(`INFO:     127.0.0.1:0 - "POST /generate HTTP/1.1" 200 OK`)
	if !srv.Ready() {
		// A peer died as the load ended: the node is stuck, not ready.
		<-peers.Crashed()
		return &ExitError{Code: 1, Err: errPeerLost}
	}
	log.Printf("The server is fired up and ready to roll!")

	select {
	case <-srv.Dead():
		return &ExitError{Code: 1, Err: errors.New("the scheduler crashed")}
	case <-peers.Crashed():
		return &ExitError{Code: 1, Err: errPeerLost}
	case err := <-serveErr:
		return &ExitError{Code: 1, Err: fmt.Errorf("serving %s: %w", cfg.Addr(), err)}
	case <-ctx.Done():
	}
	log.Printf("SIGTERM received. signum=None frame=None. Draining requests and shutting down...")
	if d := cfg.Sim.Faults.IgnoreSigterm; d > 0 {
		// A server that keeps serving through SIGTERM (wall time).
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-srv.Dead():
			return &ExitError{Code: 1, Err: errors.New("the scheduler crashed")}
		}
	}
	srv.Drain()
	deadline := time.Now().Add(drainTimeout)
	var logged time.Time
	for srv.InFlight() > 0 && time.Now().Before(deadline) {
		if time.Since(logged) >= drainLogEvery {
			log.Printf("Gracefully exiting... Remaining number of requests %d", srv.InFlight())
			logged = time.Now()
		}
		time.Sleep(drainPoll)
	}
	return nil
}

// checkConfig logs SGLang's adjustments and returns the exception class and
// message of a configuration SGLang refuses while it builds its server args,
// or "". Speculative decoding runs the overlap worker with any topk (SGLang
// dropped the spec-v1 worker and SGLANG_ENABLE_SPEC_V2's topk-1 limit).
func checkConfig(cfg *cmdline.Config, log *sglog.Logger) (exception, message string) {
	if exc, msg := cfg.StartupError(); msg != "" {
		return exc, msg
	}
	if msg := cfg.UnknownSpecAlgorithm(); msg != "" {
		return "ValueError", msg
	}
	if _, reset := cfg.RunningCap(); reset {
		log.Printf("Max running requests is reset to %d for speculative decoding. You can override this by explicitly setting --max-running-requests.", cmdline.SpecMaxRunningRequests)
	}
	if cfg.Speculative() && cfg.SpecTopK == 1 && cfg.SpecDraftTokens != 0 && cfg.SpecDraftTokens != cfg.SpecSteps+1 {
		log.Printf("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1")
	}
	if a := cfg.Adaptive; a != nil && a.Strategy == "ema" {
		first := a.Slots[0]
		steps := cfg.SpecSteps
		if !slices.Contains(first.Candidates, steps) {
			steps = first.Candidates[len(first.Candidates)/2]
		}
		log.Printf("AdaptiveSpeculativeParams initialized: steps=%d, candidate_steps=%s", steps, pyList(first.Candidates))
	}
	return "", ""
}

// pyList is a list of ints as Python prints it.
func pyList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// startChildren starts one scheduler child per rank of this node, each a re-exec of this
// binary named sglang::scheduler_TP<rank> that holds the rank's memory. The
// children exit on their own once this process is gone.
func startChildren(cfg *cmdline.Config, opt RunOptions, start time.Time) error {
	for _, r := range cfg.NodeRanks() {
		args := append([]string{"sglang::scheduler_TP" + strconv.Itoa(r), "sim"}, opt.Args...)
		args = append(args, "--sim-child-rank", strconv.Itoa(r), "--sim-parent-pid", strconv.Itoa(opt.PID),
			"--sim-parent-start", strconv.FormatInt(start.UnixNano(), 10), "--sim-state", cfg.Sim.StateDir)
		cmd := &exec.Cmd{Path: opt.Executable, Args: args, SysProcAttr: childAttr(cfg.Sim.Faults.OrphanChildren)}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting scheduler TP%d: %w", r, err)
		}
		go cmd.Wait() // reap it, so that a dead child is not a zombie holding memory
	}
	return nil
}
