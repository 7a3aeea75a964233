package orchestrator

import (
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/results"
)

// EventKind says what an Event reports.
type EventKind string

// Event kinds, in the order a campaign emits them.
const (
	EventCampaignStart EventKind = "campaign_start" // RunDir, Total, Rounds, Message (host, or the fleet's hosts), Hosts
	EventScenarioStart EventKind = "scenario_start" // Scenario, Round, Index, Total
	EventScenarioSkip  EventKind = "scenario_skip"  // already complete in a resumed run
	EventPhaseStart    EventKind = "phase_start"    // Phase
	EventPhaseEnd      EventKind = "phase_end"      // Phase, Outcome, Duration, Err
	EventServerLog     EventKind = "server_log"     // Message: the newest server log line while loading
	EventWaiting       EventKind = "waiting"        // Message: what a phase is waiting for (GPU memory, health)
	EventSweep         EventKind = "sweep"          // Sweep: a load generator event
	EventScenarioEnd   EventKind = "scenario_end"   // Result
	EventWarning       EventKind = "warning"        // Message
	EventCampaignEnd   EventKind = "campaign_end"   // RunDir
	// EventHostLost: a fleet gave up on Host (Message: why; Round: the round
	// it was running, which moves to another host).
	EventHostLost EventKind = "host_lost"
	// EventRoundOutOfTime: Round was not started, for lack of time before
	// Options.Deadline (Message: the estimate).
	EventRoundOutOfTime EventKind = "round_out_of_time"
	// EventLook: a sequential campaign looked before Round; Message says
	// what it decided (which variants stopped and why, which go on).
	EventLook EventKind = "look"
)

// Event is one thing worth showing a person watching a campaign. Packages
// below cmd never print; the CLI turns events into a live display or lines.
type Event struct {
	Time     time.Time
	Kind     EventKind
	Scenario string
	Round    int // the launch's round, 1-based
	Rounds   int // rounds in the campaign
	// Parts, on EventCampaignStart, is how many results rounds the rounds
	// were split into over a fleet (then each launch's Round is its part);
	// 0 when each round runs whole.
	Parts int
	// Replicate, in a run whose rounds were split into parts, is the round
	// as the campaign counts it (rounds: 3 has replicates 1 to 3, and
	// Rounds is then 3); Round is the results round of its part, the one
	// the run's files are named by. 0 when each round runs whole.
	Replicate int
	Index     int // 1-based position of the launch in the campaign's launch sequence
	Total     int // launches in the campaign: scenarios × rounds
	Phase     StepName
	Outcome   string
	Duration  time.Duration
	Err       error
	Message   string
	RunDir    string
	Sweep     *loadgen.Event
	Result    *results.ScenarioResult
	// Host is the fleet's host the event is about; empty for a single host.
	Host string
	// Hosts is how many hosts the campaign runs on (campaign start).
	Hosts int
}
