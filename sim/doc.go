// Package sim is a simulated SGLang server: it accepts SGLang's launch flags,
// loads slowly, answers health and the OpenAI-compatible streaming API, runs a
// continuous-batching performance model calibrated to a real 8-GPU campaign,
// holds "GPU memory" in per-rank scheduler child processes, and fails on
// demand. The fake nvidia-smi that reports
// that memory is package gpu; the command line, package cmdline.
//
// The performance model (model.go, scheduler.go, virtual.go) is pure code;
// the HTTP server (server.go) and the process handling (run.go, child.go)
// drive it in wall time scaled by --sim-speed.
package sim
