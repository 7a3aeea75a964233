// Package cmdline is SGLang's command line as the sim follows it: the flag
// table, argparse's parsing and its words (usage, errors, --help), the
// server args SGLang resolves and logs, and the sim's own --sim-… knobs,
// into one Config. It knows the GPU only through package gpu (the compute
// capability fusion depends on, the devices CUDA_VISIBLE_DEVICES lets a
// process see); what the server does with a Config is above it.
package cmdline
