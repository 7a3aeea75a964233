package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/gpu"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

// Load-phase constants.
const (
	// checkpointShards is how many safetensors shards the loading log counts.
	checkpointShards = 64
	// loadProgressLines is how many progress lines the weight loading logs.
	loadProgressLines = 8
	// dieAtFrac is where die-during-load strikes (during weight loading).
	dieAtFrac = 0.4
)

// errLoadFailed reports a startup failure already written to the log.
var errLoadFailed = fmt.Errorf("server failed to start")

// loader plays SGLang's startup in simulated time.
type loader struct {
	cfg   *cmdline.Config
	log   *sglog.Logger
	speed float64
	now   func() time.Time
	done  float64 // fraction of the load time already played
	// join, when set, forms the multi-node group between "Init torch
	// distributed begin" and its end (ranks.go): the load's timeline starts
	// once every node has joined.
	join func(ctx context.Context) error
}

// sleepTo waits (in wall time) until the load reaches fraction frac.
func (l *loader) sleepTo(ctx context.Context, frac float64) error {
	if frac <= l.done {
		return nil
	}
	d := time.Duration(float64(l.cfg.Sim.LoadTime) * (frac - l.done) / l.speed)
	l.done = frac
	return pause.For(ctx, d)
}

func gb(mib int) float64 { return float64(mib) / 1024 }

// run logs the startup milestones of every rank and returns nil when the
// server may turn healthy. hang-during-load blocks until ctx ends.
func (l *loader) run(ctx context.Context) error {
	c := l.cfg
	free := func(frac float64) float64 { return gb(gpu.GPUTotalMiB - rankMemoryMiB(c, frac)) }
	ranks := c.NodeRanks()
	for _, r := range ranks {
		l.log.Rankf(r, "Init torch distributed begin.")
	}
	if l.join != nil {
		if err := l.join(ctx); err != nil {
			return err
		}
	}
	if c.NodeTP() > c.Sim.GPUs {
		l.log.Raw(sglog.DeviceTraceback(l.now, ranks[0]+c.Sim.GPUs, c.Sim.GPUs == 0))
		return errLoadFailed
	}
	for _, r := range ranks {
		l.log.Rankf(r, "Init torch distributed ends. mem usage=%.2f GB", gb(gpu.CUDAContextMiB))
	}
	if err := l.sleepTo(ctx, gpu.FracWeightsBegin); err != nil {
		return err
	}
	for _, r := range ranks {
		l.log.Rankf(r, "Load weight begin. avail mem=%.2f GB", free(0))
	}
	if kvCacheMiB(c) <= 0 {
		l.log.Raw(sglog.OOMTraceback(l.now, rankWeightsMiB(c), staticMiB(c)))
		return errLoadFailed
	}
	for i := 1; i <= loadProgressLines; i++ {
		frac := gpu.FracWeightsBegin + (gpu.FracWeightsEnd-gpu.FracWeightsBegin)*float64(i)/loadProgressLines
		if c.Sim.Faults.DieDuringLoad && frac > dieAtFrac {
			if err := l.sleepTo(ctx, dieAtFrac); err != nil {
				return err
			}
			l.log.Raw(sglog.DieDuringLoadTraceback(l.now))
			return errLoadFailed
		}
		if err := l.sleepTo(ctx, frac); err != nil {
			return err
		}
		shards := checkpointShards * i / loadProgressLines
		elapsed := time.Duration(float64(c.Sim.LoadTime) * (frac - gpu.FracWeightsBegin))
		l.log.Raw(fmt.Sprintf("Loading safetensors checkpoint shards: %3d%% Completed | %d/%d [%s<?, ?it/s]",
			100*shards/checkpointShards, shards, checkpointShards, clock(elapsed)))
	}
	for _, r := range ranks {
		l.log.Rankf(r, "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB.",
			free(gpu.FracWeightsEnd), gb(rankWeightsMiB(c)))
	}
	if err := l.sleepTo(ctx, gpu.FracKVAlloc); err != nil {
		return err
	}
	for _, r := range ranks {
		l.log.Rankf(r, "KV Cache is allocated. #tokens: %d, KV size: %.2f GB", c.TotalTokens(), gb(kvCacheMiB(c)))
	}
	if err := l.sleepTo(ctx, gpu.FracGraphBegin); err != nil {
		return err
	}
	for _, r := range ranks {
		l.log.Rankf(r, "Capture cuda graph begin. This can take up to several minutes. avail mem=%.2f GB", free(gpu.FracGraphBegin))
	}
	if c.Sim.Faults.HangDuringLoad {
		// An NCCL hang: no error, no progress, health stays 503.
		<-ctx.Done()
		return ctx.Err()
	}
	if err := l.sleepTo(ctx, gpu.FracGraphEnd); err != nil {
		return err
	}
	elapsed := time.Duration(float64(c.Sim.LoadTime) * (gpu.FracGraphEnd - gpu.FracGraphBegin))
	maxRun, _ := c.RunningCap()
	for _, r := range ranks {
		l.log.Rankf(r, "Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB.",
			elapsed.Seconds(), gb(gpu.CUDAGraphMiB), free(1))
	}
	l.log.Rankf(ranks[0], "max_total_num_tokens=%d, chunked_prefill_size=%d, max_prefill_tokens=16384, max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB",
		c.TotalTokens(), c.ChunkedPrefillSize, maxRun, c.ContextLength, free(1))
	return l.sleepTo(ctx, 1)
}

// clock formats d as tqdm does, mm:ss.
func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}
