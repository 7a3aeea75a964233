// Package policy turns a race's answer (package verdict/selection: the
// configuration to serve at each level) into what an engine runs: the load
// bands, the engine setting that switches between the bands' configurations
// by the running batch where the engine has one, and, in a later race that
// includes that setting as a configuration named "policy", whether it
// delivers the best of the fixed configurations at every level.
//
// It reads the scenarios as the run's manifest recorded them, so a verdict
// rebuilt from the run directory alone says the same.
package policy
