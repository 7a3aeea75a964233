// Package faults is the reliability and security suite: it has no code of
// its own, only tests that break things on purpose against the real bakeoff
// binary and report how it copes. Bad input (a corpus of broken campaign and
// scenario files in testdata/bad, broken SSE streams, garbage from
// nvidia-smi, torn journals) must end in a clear error and exit code 2, never
// a panic; faults during a campaign (links cut, sshd killed, the orchestrator
// killed, servers crashing or lingering, a full disk) must end with every
// scenario completed or failed with a reason, nothing measured lost and no
// process left behind. Hosts are network namespaces with a real sshd
// (internal/testhost). docs/RELIABILITY.md carries the figures.
package faults
