// Package gpu is the simulated host's GPUs: their name, memory, power and
// compute capability, which of them CUDA_VISIBLE_DEVICES lets a process
// see, the state directory where a server's ranks register the memory they
// hold and the work they do, and the fake nvidia-smi that reports both, as
// the real one reads NVML. It knows nothing of SGLang: a server's memory
// over its load (package sim) and its flags (its command line) sit above it.
package gpu
