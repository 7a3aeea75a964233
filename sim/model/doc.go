// Package model is the simulated engine: what the GPU would do and when.
// A continuous-batching scheduler with chunked prefill, speculative
// decoding's accept lengths, a radix prefix cache, the step-time model
// calibrated on the seeds' campaign, per-launch noise and drift, the
// tokenizer and the text it generates, and the Engine that steps the
// scheduler in wall time. The virtual runs (RunVirtual…) step it in
// simulated time alone, for the planner's estimates and the calibration.
// It reads a server's Config (package cmdline) and logs through package
// sglog; it serves nothing (the HTTP server is package sim's).
package model
