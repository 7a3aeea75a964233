// Package preflight asks what flags an installed engine build accepts and
// whether a campaign's scenarios fit them, before anything is launched.
//
// An engine's own --help is the source: each format is read as the engine
// prints it (Python argparse for SGLang and vLLM, llama.cpp's layout of
// common/arg.cpp, Python click for trtllm-serve) into a Table of options,
// and Table.Check reads a scenario's rendered flags the way the engine's
// parser would, returning Findings: unknown flags (with the replacement the
// engine names, in another option's help or, for a flag it removed, in its
// source (removed.go), else the closest spelling it accepts), removed ones
// (with their replacement), values outside the listed choices, and
// deprecated aliases. Probe runs the help command on a host; Runs runs a
// program only to see that it is there (SGLang's router); Compute reads the
// host's GPUs for the one rule that depends on them (SGLang's FlashInfer
// allreduce fusion). Nothing here prints: the orchestrator turns findings
// into events and errors.
package preflight
