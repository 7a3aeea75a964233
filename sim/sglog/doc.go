// Package sglog is what the sim says the way SGLang says it: log lines
// stamped as SGLang stamps them, and the Python tracebacks of the faults it
// plays, so that the orchestrator's failure signatures, written against
// real SGLang logs, match the sim's.
package sglog
