package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// TestFailureGolden: on each engine's log of a server failing at start, the
// failure's line is the one that says what went wrong, and its excerpt
// keeps that line, the traceback's exception and the last lines. The logs in
// testdata/failures/ are shaped after what the engines print; source names
// where each shape comes from (testdata/README.md says the same).
func TestFailureGolden(t *testing.T) {
	tests := []struct {
		log, engine, line, source string
	}{
		{"llamacpp-slot-save-path", engine.LlamaCpp,
			`error while handling argument "--slot-save-path": not a directory: /tmp/bakeoff/llama-slots`,
			"ggml-org/llama.cpp common/arg.cpp (the handler's message, then usage and the -h hint); janhq/jan issue 6099 (a real llama-server stderr of the same shape)"},
		{"llamacpp-model-load", engine.LlamaCpp,
			"llama_model_load: error loading model: unknown model architecture: 'glm5next'",
			"ggml-org/llama.cpp issue 11819 (llama-server's loading lines); public harnesses' tests quoting the loader's error and 'exiting due to model loading error'"},
		{"sglang-nccl", engine.SGLang,
			"RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
			"sgl-project/sglang issue 8974 (Scheduler hit an exception, NCCL error, Received sigquit from a child process)"},
		{"sglang-args", engine.SGLang,
			"launch_server.py: error: unrecognized arguments: --speculative-draft /models/draft",
			"Python argparse's error shape (usage, then 'PROG: error: …'), as SGLang's launch_server prints it"},
		{"vllm-oom", engine.VLLM,
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 139.81 GiB of which 212.81 MiB is free. Including non-PyTorch memory, this process has 139.58 GiB memory in use.",
			"vllm-project/vllm issues 23176, 27508 and 44411 (EngineCore's ERROR-prefixed traceback, then the process's, then the API server's 'Engine core initialization failed. See root cause above.')"},
		{"vllm-args", engine.VLLM,
			"vllm serve: error: argument --max-num-seqs: invalid int value: 'many'",
			"Python argparse's error shape, as vllm serve prints it"},
		{"trtllm-executor", engine.TRTLLM,
			"[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] Assertion failed: Error occurred when running GEMM! (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/KernelRunner.cpp:180)",
			"NVIDIA/TensorRT-LLM issues 5389 and 9263 (the [E] line with C++ frames) and 7706 (trtllm-serve's traceback ending 'Executor worker returned error')"},
		{"generic-uvicorn-bind", engine.Generic,
			"ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use",
			"uvicorn's bind failure, as public SGLang and vLLM logs show it"},
		{"generic-killed", engine.Generic, "", "made up: a server killed while loading says nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.log, func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join("testdata", "failures", tt.log+".log"))
			if err != nil {
				t.Fatal(err)
			}
			f := profile(t, tt.engine).Failure(string(log))
			if f.Line != tt.line {
				t.Errorf("line %q\nwant %q", f.Line, tt.line)
			}
			if tt.line != "" && !strings.Contains(f.Excerpt, tt.line) {
				t.Errorf("the excerpt leaves out the line:\n%s", f.Excerpt)
			}
			golden.Check(t, filepath.Join("testdata", "failures", tt.log+".golden"), []byte("line: "+f.Line+"\n\n"+f.Excerpt+"\n"))
		})
	}
}

// TestFailureTracebacks: the first traceback's exception is the cause, taken
// without the logger's prefix; a traceback the log cuts short has none, and
// the error-like lines before it decide.
func TestFailureTracebacks(t *testing.T) {
	tests := []struct {
		name, log, want string
	}{
		{"chained", "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3, in g\nValueError: bad config",
			"KeyError: 'x'"},
		{"prefixed", "(EngineCore pid=1) ERROR 01-01 00:00:00 [core.py:1] Traceback (most recent call last):\n(EngineCore pid=1) ERROR 01-01 00:00:00 [core.py:1]   File \"x.py\", line 2, in f\n(EngineCore pid=1) ERROR 01-01 00:00:00 [core.py:1] AssertionError",
			"AssertionError"},
		{"cut short", "ERROR 01-01 00:00:00 [core.py:1] EngineCore failed to start.\nTraceback (most recent call last):\n  File \"x.py\", line 2, in f",
			"ERROR 01-01 00:00:00 [core.py:1] EngineCore failed to start."},
		{"empty", "\n\n", ""},
	}
	for _, tt := range tests {
		if got := profile(t, engine.VLLM).Failure(tt.log).Line; got != tt.want {
			t.Errorf("%s: line %q, want %q", tt.name, got, tt.want)
		}
	}
}
