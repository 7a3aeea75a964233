// Package sim is a simulated SGLang server, the process: it parses
// SGLang's launch flags, loads slowly, holds "GPU memory" in per-rank
// scheduler child processes, joins the nodes of a multi-node group, serves
// until SIGTERM and drains, and fails on demand. It stands in for the GPU
// only; everything else about it is a real server process.
//
// Its rooms, from the bottom up (TestLayers keeps the order):
//   - gpu: the fake host's GPUs, their state directory and nvidia-smi;
//   - cmdline: SGLang's command line, into one Config;
//   - sglog: SGLang's log lines and tracebacks;
//   - model: the engine model (scheduler, speculation, prefix cache, step
//     costs, launch noise) and the virtual runs; router: SGLang's router,
//     beside it, talking HTTP only;
//   - server: the HTTP face of one engine;
//   - sim: this process around them.
package sim
