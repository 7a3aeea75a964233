package model

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// ClosedLoop describes a closed-loop load for RunVirtual: Concurrency clients
// each send their next request as soon as the previous one ends, Requests in
// all, every request asking for MaxTokens tokens (ignore_eos).
type ClosedLoop struct {
	Concurrency  int
	Requests     int
	MaxTokens    int
	PromptTokens int
	// Start is the simulated time since the launch began at which this load
	// starts: where the launch's drift (--sim-drift) is read from, so that
	// the levels of one launch can be run one after the other.
	Start time.Duration
}

// VirtualResult is the outcome of a virtual closed-loop run, in simulated time.
type VirtualResult struct {
	// Throughput is output tokens per simulated second over the steady
	// state: from the start until the last request is sent (the drain tail,
	// when fewer than Concurrency requests remain, is left out).
	Throughput float64
	// WallThroughput is all tokens over the whole run.
	WallThroughput float64
	// PerRequest is the mean of tokens/latency over requests.
	PerRequest float64
	// MeanAccept is the mean accept length over decode steps.
	MeanAccept float64
	Makespan   time.Duration
}

// RunVirtual drives the scheduler for cfg with a closed-loop load in
// simulated time, without sleeping: the calibration and the docs table use it
// to read the model's figures exactly, and the server uses the same
// Scheduler in wall time. The launch noise of cfg (--sim-launch-sigma,
// --sim-drift) is drawn from seed as the server draws it from --sim-seed:
// the same seed gives the same launch factor and drift path. With
// --sim-drift-scope host the drift is the host's of cfg's --sim-state, read
// at host time load.Start plus the simulated time since the load began.
func RunVirtual(cfg *cmdline.Config, load ClosedLoop, seed uint64) VirtualResult {
	var launch *Launch
	if n := NoiseOf(cfg.Sim); !n.Zero() {
		launch = n.Draw(seed)
	}
	var host *HostDrift
	if cfg.Sim.HostDrift {
		host = NewHostDrift(cfg.Sim.Drift, cfg.Sim.DriftTau, HostSeed(cfg.Sim.StateDir))
	}
	return runVirtual(cfg, NewPerf(cfg), load, seed, launch, host)
}

// TrueThroughput is the model's true throughput for cfg under load: the
// mean steady-state throughput of runs seeded runs (seeds 1…runs) without
// step noise, launch factor or drift, so that only the accept lengths vary,
// as they do between the requests of a real level. A test uses it to know
// the true best configuration of a space at each load; its error shrinks
// as 1/√runs (about 1%/√runs at C = 1 with 30 requests of 200 tokens, less
// under more load).
func TrueThroughput(cfg *cmdline.Config, load ClosedLoop, runs int) float64 {
	perf := NewPerf(cfg)
	perf.noise = 0
	var sum float64
	for seed := range uint64(max(1, runs)) {
		sum += runVirtual(cfg, perf, load, seed+1, nil, nil).Throughput
	}
	return sum / float64(max(1, runs))
}

// RunVirtualLaunch is RunVirtual with the launch given (nil: no launch
// noise), so that several loads can share one launch's factor and drift.
func RunVirtualLaunch(cfg *cmdline.Config, load ClosedLoop, seed uint64, launch *Launch) VirtualResult {
	return runVirtual(cfg, NewPerf(cfg), load, seed, launch, nil)
}

// runVirtual runs the load against perf, cfg giving the scheduler's limits.
func runVirtual(cfg *cmdline.Config, perf Perf, load ClosedLoop, seed uint64, launch *Launch, host *HostDrift) VirtualResult {
	maxRun, _ := cfg.RunningCap()
	s := NewScheduler(perf, maxRun, cfg.ChunkedPrefillSize, rand.New(rand.NewPCG(seed, seed^0x5eed)))
	var (
		now       time.Duration
		sent      int
		start     = map[*Job]time.Duration{}
		lastSend  time.Duration
		steadyTok int
		allTok    int
		perReqSum float64
		done      int
		accSum    int
		accN      int
	)
	send := func() {
		j := &Job{ID: uint64(sent), PromptTokens: load.PromptTokens, Target: load.MaxTokens}
		s.Add(j)
		start[j] = now
		lastSend = now
		sent++
	}
	for sent < min(load.Concurrency, load.Requests) {
		send()
	}
	for !s.Idle() {
		r := s.Step()
		r.Duration = launch.Scale(r.Duration, load.Start+now)
		if host != nil {
			r.Duration = time.Duration(float64(r.Duration) * math.Exp(host.At((load.Start + now).Seconds())))
		}
		now += r.Duration
		accSum += r.AcceptSum
		accN += r.AcceptN
		for _, e := range r.Emits {
			allTok += e.Tokens
			if sent < load.Requests || now <= lastSend {
				steadyTok += e.Tokens
			}
			if e.Done {
				done++
				lat := now - start[e.Job]
				perReqSum += float64(e.Job.Generated) / lat.Seconds()
				if sent < load.Requests {
					send()
				}
			}
		}
	}
	res := VirtualResult{Makespan: now}
	if lastSend > 0 {
		res.Throughput = float64(steadyTok) / lastSend.Seconds()
	} else if now > 0 {
		res.Throughput = float64(allTok) / now.Seconds()
	}
	if now > 0 {
		res.WallThroughput = float64(allTok) / now.Seconds()
	}
	if done > 0 {
		res.PerRequest = perReqSum / float64(done)
	}
	if accN > 0 {
		res.MeanAccept = float64(accSum) / float64(accN)
	}
	return res
}
