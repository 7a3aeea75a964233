// Package rundiff compares two runs of one campaign, what `bakeoff diff`
// shows: every scenario and level of the new run against the old with the
// verdict's statistics (package judge computes each run, package
// verdict/rule decides), the rows one family corrected as a verdict's is,
// capacity under an objective, and beside them what may explain a change
// (the accept length, the servers' own figures, the turns of a session).
// A deployment that holds other GPUs in the new run is compared per GPU.
package rundiff
