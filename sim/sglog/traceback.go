package sglog

import (
	"fmt"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// The crash texts of the faults, shaped like the Python tracebacks SGLang
// prints, so the orchestrator's failure signatures match them.

// FirstRequestError is the last line of the crash-on-first-request
// traceback: the seeds' EAGLE worker bug.
const FirstRequestError = "AttributeError: 'EAGLEWorkerV2' object has no attribute 'spec_disable_batch_threshold'"

func Stamp(now func() time.Time, rank int) string {
	return fmt.Sprintf("[%s TP%d]", now().Format(TimeFormat), rank)
}

func FirstRequestTraceback(now func() time.Time) string {
	return Stamp(now, 0) + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2851, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 120, in decorate_context
    return func(*args, **kwargs)
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1012, in event_loop_overlap
    batch_result = self.run_batch(batch)
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2015, in run_batch
    batch_result = self.model_worker.forward_batch_generation(model_worker_batch)
  File "/sgl-workspace/sglang/python/sglang/srt/speculative/eagle_worker_v2.py", line 611, in forward_batch_generation
    if batch.batch_size() > self.spec_disable_batch_threshold:
` + FirstRequestError + "\n"
}

func CrashAfterTraceback(now func() time.Time) string {
	return Stamp(now, 0) + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2851, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1012, in event_loop_overlap
    batch_result = self.run_batch(batch)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 2270, in forward_decode
    return self.model.forward(
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.

` + fmt.Sprintf("[%s] Received sigquit from a child process. It usually means the child failed.\n", now().Format(TimeFormat))
}

func DieDuringLoadTraceback(now func() time.Time) string {
	return Stamp(now, 0) + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2836, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 812, in load_model
    self.model = get_model(
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3

` + fmt.Sprintf("[%s] Rank 0 scheduler is dead. Please check if there are relevant logs.\n", now().Format(TimeFormat)) +
		fmt.Sprintf("[%s] Exit code: -6\n", now().Format(TimeFormat)) +
		"RuntimeError: Initialization failed. Please see the error messages above.\n"
}

func AddrInUseTraceback(cfg *cmdline.Config) string {
	return `Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/launch_server.py", line 29, in <module>
    launch_server(server_args)
  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 1450, in launch_server
    uvicorn.run(
OSError: [Errno 98] Address already in use
` + fmt.Sprintf("ERROR:    [Errno 98] error while attempting to bind on address ('%s', %d): address already in use\n", cfg.Host, cfg.Port)
}

// ConfigExceptionTraceback is SGLang's traceback when building its server
// args raises: a ValueError for an unknown speculative algorithm, a
// FileNotFoundError for an adaptive config it cannot open, ….
func ConfigExceptionTraceback(exception, msg string) string {
	return `Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/launch_server.py", line 25, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 4012, in __post_init__
    self._handle_speculative_decoding()
` + exception + ": " + msg + "\n"
}

func OOMTraceback(now func() time.Time, needMiB, freeMiB int) string {
	return Stamp(now, 0) + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1880, in init_memory_pool
    raise RuntimeError(
` + fmt.Sprintf("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. (need %d MiB for weights, %d MiB available: CUDA out of memory)\n", needMiB, freeMiB)
}

// DeviceTraceback is a scheduler whose gpu_id is not a device its process
// sees (more ranks on the node than CUDA_VISIBLE_DEVICES lists, or than
// --sim-gpus): torch's set_device raises, in its words (c10/cuda's help line
// after the error), then SGLang's parent, sent SIGQUIT by the scheduler,
// ends. With no device visible at all, torch's lazy init says so instead.
func DeviceTraceback(now func() time.Time, rank int, none bool) string {
	last := `torch.AcceleratorError: CUDA error: invalid device ordinal
GPU device may be out of range, do you have enough GPUs?
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with ` + "`TORCH_USE_CUDA_DSA`" + ` to enable device-side assertions.
`
	if none {
		last = "RuntimeError: No CUDA GPUs are available\n"
	}
	return Stamp(now, rank) + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2836, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 540, in init_torch_distributed
    torch.get_device_module(self.device).set_device(self.gpu_id)
` + last + "\n" + fmt.Sprintf("[%s] Received sigquit from a child process. It usually means the child failed.\n", now().Format(TimeFormat))
}

// FusionTraceback is how the refusal ends a scheduler: an exception while
// the model runner sets up its communicators, before the weights load.
func FusionTraceback(stamp string) string {
	return stamp + ` Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/layers/flashinfer_comm_fusion.py", in _resolve_backend
    raise ValueError(
ValueError: ` + cmdline.FusionError + "\n"
}
