package verdict

// A note is a finding about the measurement: package verdict/notes makes
// them, the report shows them most severe first, and the rule reads none.
// The check names live here, beside the type, because the report picks
// notes out by them.

import (
	"github.com/bakeoff-dev/bakeoff/measure"
)

// Note severities, most severe first.
const (
	SeverityRed  = "red"  // the comparison is wrong or a variant is broken
	SeverityWarn = "warn" // the comparison may be unfair; read with care
	SeverityInfo = "info" // a check that passed, said so
)

// Note is one fairness finding.
type Note struct {
	Severity string        `json:"severity"`
	Check    string        `json:"check"`
	Scenario string        `json:"scenario,omitempty"`
	Level    measure.Level `json:"level,omitzero"`
	Text     string        `json:"text"`
}

// Check names, as Note.Check carries them.
const (
	CheckFingerprint = "fingerprint"
	CheckScenario    = "scenario"
	CheckRequests    = "requests"
	CheckTokens      = "tokens"
	CheckGreedy      = "greedy"
	CheckConcurrency = "concurrency"
	CheckSaturation  = "saturation"
	CheckClient      = "client"
	CheckSamples     = "samples"
)

// Check names of the notes about the launches behind the verdict and what
// the inconclusive levels would need.
const (
	CheckRounds       = "rounds"
	CheckInconclusive = "inconclusive"
)

// CheckEnergy names the note on GPU power readings.
const CheckEnergy = "energy"

// CheckCache names the prefix-cache notes.
const CheckCache = "cache"

// CheckConnections is the check that names a server that closed kept-alive
// connections under the load.
const CheckConnections = "connections"

// CheckServer names the note comparing the server's generation throughput
// with the client's.
const CheckServer = "server"

// CheckFigures says which role of a deployment the engine's own figures
// were read from.
const CheckFigures = "figures"

// CheckITL names the note about records that keep no inter-token gaps.
const CheckITL = "itl"

// CheckHosts names the notes about the hosts of a fleet.
const CheckHosts = "hosts"

// CheckKVTransfer names the note on a disaggregated scenario whose KV cache
// went from prefill to decode over TCP, its host having no RDMA device.
const CheckKVTransfer = "kv transfer"

// CheckSelection names the note on a selection campaign's race.
const CheckSelection = "selection"

// CheckPrior names the note on the host's noise profile.
const CheckPrior = "noise profile"

// CheckHost names the host doubts: a GPU held down during a sweep, or a
// host busy for one side of a round and quiet for the other.
const CheckHost = "host"
