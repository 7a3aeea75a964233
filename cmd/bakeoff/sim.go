package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/router"
)

const simUsage = `
bakeoff sim [SGLang flags] [--sim-… flags]
bakeoff sim nvidia-smi [nvidia-smi query flags]
bakeoff sim router --pd-disaggregation --prefill URL [BOOTSTRAP_PORT] --decode URL [--host H] [--port P]

Runs a simulated SGLang server: it takes SGLang's launch flags as SGLang's
argparse parser does (--help lists them in its format; an unknown flag fails
with "unrecognized arguments", a deprecated alias warns), loads slowly,
serves /health, /v1/chat/completions, /v1/completions, /server_info, /metrics
and friends, and holds "GPU memory" in one scheduler child per --tp-size
rank, which the fake nvidia-smi reports. $BAKEOFF_SIM_COMPUTE_CAP sets the
fake GPUs' compute capability (default 12.0, the RTX PRO 6000's).

It also plays every process of a larger deployment: a node of a multi-node
group (--nnodes N --node-rank R --dist-init-addr HOST:PORT), a prefill or
decode worker (--disaggregation-mode prefill|decode), and, with
"bakeoff sim router", SGLang's router in front of them.

Sim knobs:
  --sim-speed X          run simulated time X times faster (default 1)
  --sim-load-time D      simulated load time (default 20s; wall time D/X)
  --sim-seed N           seed of the noise and accept lengths (default: fresh),
                         mixed with $BAKEOFF_LAUNCH and $BAKEOFF_ROUND if set
  --sim-slowdown F       multiply every step time by F (default 1)
  --sim-noise F          relative noise σ of each step (default 0.02)
  --sim-launch-sigma F   σ of the log of a step-time factor drawn once per
                         launch from the seed (default 0)
  --sim-drift F          σ of a slow drift in the log of step time, an
                         Ornstein–Uhlenbeck process (default 0)
  --sim-drift-tau D      the drift's correlation time, simulated (default 1m)
  --sim-drift-scope S    launch (each launch its own drift, default) or host
                         (one drift for every server on the same --sim-state)
  --sim-gpus N           GPUs this server may use (default: --tp over --nnodes)
  --sim-state DIR        memory registry (default $BAKEOFF_SIM_STATE or
                         $TMPDIR/bakeoff-sim-state-UID)
  --sim-fault NAME[=ARG] die-during-load, hang-during-load,
                         crash-on-first-request, crash-after=N,
                         ignore-sigterm=D, hold-memory=D, orphan-children,
                         wrong-output, close-after-stream, idle-close=D
                         (repeatable; durations are wall time)

See docs/SIM.md for the performance model and its calibration.`

func init() {
	register(&command{
		Name:    "sim",
		Summary: "run the simulated SGLang engine (or its fake nvidia-smi)",
		Usage:   simUsage,
		Run:     runSim,
	})
}

func runSim(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && args[0] == "nvidia-smi" {
		return gpu.NvidiaSMI(ctx, args[1:], gpu.SMIEnv{Stdout: e.Stdout, Stderr: e.Stderr, Getenv: e.Getenv, Now: e.Now})
	}
	if len(args) > 0 && args[0] == "router" {
		return router.Run(ctx, args[1:], router.Env{Stdout: e.Stdout, Stderr: e.Stderr, Now: e.Now})
	}
	cfg, err := cmdline.ParseArgs(args, e.Getenv)
	if errors.Is(err, cmdline.ErrHelp) {
		// SGLang's help, as its argparse parser prints it, for whoever reads
		// the engine's own argument list.
		fmt.Fprint(e.Stdout, cmdline.Help(cmdline.Columns(e.Getenv)))
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(e.Stderr, err)
		return exitBadInput
	}
	if e.LookupEnv != nil {
		if v, set := e.LookupEnv(gpu.CUDAVisibleDevicesEnv); set && strings.TrimSpace(v) == "" {
			cfg.SeeNoDevice() // set empty (a role of gpus: 0) is no GPU to CUDA, unset every GPU
		}
	}
	if cfg.Sim.ChildRank >= 0 {
		if err := sim.RunChild(ctx, cfg, e.PID, e.Now); err != nil {
			fmt.Fprintf(e.Stderr, "bakeoff sim: scheduler TP%d: %v\n", cfg.Sim.ChildRank, err)
			return exitFailed
		}
		return exitOK
	}
	err = sim.Run(ctx, cfg, sim.RunOptions{Log: e.Stderr, Executable: e.Executable, Args: args, PID: e.PID, Now: e.Now})
	var ee *sim.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.Code
	default:
		fmt.Fprintf(e.Stderr, "bakeoff sim: %v\n", err)
		return exitFailed
	}
}
