package remote

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults for WaitGPUFree.
const (
	// DefaultGPUWaitTimeout is how long WaitGPUFree waits for memory to free.
	DefaultGPUWaitTimeout = 5 * time.Minute
	// DefaultGPUPollInterval is how often it asks nvidia-smi.
	DefaultGPUPollInterval = 2 * time.Second
	// DefaultStrayGrace is how long a stray GPU process gets between SIGTERM
	// and SIGKILL when KillStrays is set.
	DefaultStrayGrace = 10 * time.Second
)

// GPUWait says when a host's GPUs count as free and what to do if they do
// not become free in time.
type GPUWait struct {
	NvidiaSMI  string // command to run instead of nvidia-smi ("" = nvidia-smi)
	MaxUsedMiB int    // every GPU at or under this many MiB counts as free
	Timeout    time.Duration
	Interval   time.Duration
	// KillStrays kills the processes still holding GPU memory at the timeout
	// (SIGTERM, DefaultStrayGrace, SIGKILL) and waits once more.
	KillStrays bool
	// OnPoll, if set, sees each reading.
	OnPoll func([]GPU, []GPUProcess)
	// Indices, when set, are the only GPUs waited for (a launch that
	// shares the host with others on its other GPUs). The compute
	// processes nvidia-smi lists do not say which GPU they hold, so none is
	// waited for then: the GPUs' memory alone decides.
	Indices []int
}

// GPUBusyError is a wait for free GPU memory that timed out; it names what
// still held the memory at the last reading.
type GPUBusyError struct {
	Host       string
	GPUs       []GPU
	Processes  []GPUProcess
	Waited     time.Duration
	MaxUsedMiB int
}

func (e *GPUBusyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: GPU memory not free after %s", e.Host, e.Waited)
	var busy []string
	for _, g := range e.GPUs {
		if g.UsedMiB > e.MaxUsedMiB {
			busy = append(busy, fmt.Sprintf("GPU %d uses %d MiB", g.Index, g.UsedMiB))
		}
	}
	if len(busy) > 0 {
		fmt.Fprintf(&b, " (limit %d MiB): %s", e.MaxUsedMiB, strings.Join(busy, ", "))
	}
	if len(e.Processes) > 0 {
		var ps []string
		for _, p := range e.Processes {
			mem := "? MiB"
			if p.UsedMiB >= 0 {
				mem = strconv.Itoa(p.UsedMiB) + " MiB"
			}
			ps = append(ps, fmt.Sprintf("pid %d (%s, %s)", p.PID, p.Name, mem))
		}
		fmt.Fprintf(&b, "; held by %s", strings.Join(ps, ", "))
	}
	return b.String()
}

// NoGPUsError is an nvidia-smi that answered but listed no GPU.
type NoGPUsError struct {
	Host    string
	Command string
}

func (e *NoGPUsError) Error() string {
	return fmt.Sprintf("%s: %s listed no GPUs, so free GPU memory cannot be checked (is the driver loaded? gpu.nvidia_smi names another command)", e.Host, e.Command)
}

// gpusFree reports whether every GPU is at or under max MiB (an [N/A]
// reading cannot say, so it does not hold the wait) and no compute process
// is left.
func gpusFree(gpus []GPU, procs []GPUProcess, max int) bool {
	if len(procs) > 0 {
		return false
	}
	for _, g := range gpus {
		if g.UsedMiB > max {
			return false
		}
	}
	return true
}

// WaitGPUFree polls h until every GPU is under w.MaxUsedMiB and no compute
// process remains, and returns a *GPUBusyError naming the holders when
// w.Timeout passes first. With w.KillStrays it then kills the holders and
// waits once more.
func WaitGPUFree(ctx context.Context, h Host, w GPUWait) error {
	if w.Timeout <= 0 {
		w.Timeout = DefaultGPUWaitTimeout
	}
	if w.Interval <= 0 {
		w.Interval = DefaultGPUPollInterval
	}
	err := waitGPUOnce(ctx, h, w)
	busy, ok := err.(*GPUBusyError)
	if !ok || !w.KillStrays || len(busy.Processes) == 0 {
		return err
	}
	var pids []string
	for _, p := range busy.Processes {
		pids = append(pids, strconv.Itoa(p.PID))
	}
	list := strings.Join(pids, " ")
	members := func(ctx context.Context) ([]int, error) {
		out, _, err := h.Run(ctx, fmt.Sprintf("for p in %s; do s=; read -r s 2>/dev/null < /proc/$p/stat || continue; s=${s##*) }; case \"$s\" in Z*|X*) ;; *) echo $p ;; esac; done", list))
		return parsePIDs(out), err
	}
	signal := func(ctx context.Context, s string) error {
		_, _, err := h.Run(ctx, fmt.Sprintf("for p in %s; do kill -s %s $p 2>/dev/null; done; true", list, s))
		return err
	}
	if err := termThenKill(ctx, members, signal, DefaultStrayGrace); err != nil {
		return fmt.Errorf("%s: killing stray GPU processes %s: %w (after: %v)", h.Name(), list, err, busy)
	}
	return waitGPUOnce(ctx, h, w)
}

func waitGPUOnce(ctx context.Context, h Host, w GPUWait) error {
	start := time.Now()
	deadline := start.Add(w.Timeout)
	for {
		gpus, procs, err := QueryGPUs(ctx, h, w.NvidiaSMI)
		if err != nil {
			return err
		}
		if w.OnPoll != nil {
			w.OnPoll(gpus, procs)
		}
		if len(gpus) == 0 {
			// A GPU host whose nvidia-smi lists nothing has a driver problem;
			// "no GPUs" must not read as "all GPUs free" and let a launch
			// land on memory another server still holds.
			return &NoGPUsError{Host: h.Name(), Command: smi(w.NvidiaSMI)}
		}
		if _, dry := h.(*Dry); w.Indices != nil && !dry { // a dry host's one idle GPU stands for any
			gpus = slices.DeleteFunc(gpus, func(g GPU) bool { return !slices.Contains(w.Indices, g.Index) })
			procs = nil
			if len(gpus) < len(w.Indices) {
				return fmt.Errorf("%s: %s lists %d of GPUs %v, which the launch is given", h.Name(), smi(w.NvidiaSMI), len(gpus), w.Indices)
			}
		}
		if gpusFree(gpus, procs, w.MaxUsedMiB) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return &GPUBusyError{Host: h.Name(), GPUs: gpus, Processes: procs, Waited: time.Since(start).Round(time.Millisecond), MaxUsedMiB: w.MaxUsedMiB}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for free GPU memory: %w", h.Name(), ctx.Err())
		case <-time.After(min(w.Interval, time.Until(deadline))):
		}
	}
}
