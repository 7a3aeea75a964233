package orchestrator

// StepName names a step of a scenario's lifecycle or of a host's start. It
// is what the journal's phase, an event's Phase and a failure's phase say;
// the code compares these constants, never the text.
type StepName string

// The host-level steps, run once per host before its first launch.
const (
	StepLock    StepName = "lock"
	StepPrepare StepName = "prepare"
	// StepPreflight asks the engine for the flags it takes (preflight.go).
	StepPreflight StepName = "preflight"
)

// The lifecycle's steps, in order (scenario.go says why each is there).
const (
	StepStopOld StepName = "stop-old"
	StepGPUFree StepName = "gpu-free"
	StepLaunch  StepName = "launch"
	StepReady   StepName = "ready"
	StepSmoke   StepName = "smoke"
	StepPower   StepName = "power"
	StepSweep   StepName = "sweep"
	StepCollect StepName = "collect"
)

// The teardown's steps, in order.
const (
	StepStop         StepName = "stop"
	StepPowerStop    StepName = "power-stop"
	StepSaveLog      StepName = "save-log"
	StepGPUFreeAfter StepName = "gpu-free-after"
)
