package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Journal outcomes.
const (
	OutcomeOK       = "ok"
	OutcomeFailed   = "failed"
	OutcomeCanceled = "canceled"
	OutcomeSkipped  = "skipped"
	// OutcomeHostLost ends an attempt whose host the fleet gave up on: not
	// the scenario's failure, and not finished; its round runs again whole
	// on another host.
	OutcomeHostLost = "host-lost"
)

// PhaseHost is the journal phase of a host-level line: Event HostLost
// when a fleet gives a host up, with the reason in Error and the round it
// was running in Round.
const PhaseHost = "host"

// HostLost is the Event of a PhaseHost line.
const HostLost = "lost"

// PhaseScenario is the journal phase that brackets a whole scenario attempt;
// its end line is what --resume trusts to call a scenario done.
const PhaseScenario = "scenario"

// JournalEntry is one line of journal.jsonl: a phase starting or ending.
type JournalEntry struct {
	Time     time.Time `json:"time"`
	Scenario string    `json:"scenario,omitempty"` // empty for campaign-level phases
	Attempt  int       `json:"attempt,omitempty"`  // of this launch (scenario and round)
	Phase    string    `json:"phase"`
	Event    string    `json:"event"`             // "start" or "end"
	Outcome  string    `json:"outcome,omitempty"` // on "end": ok, failed, canceled, skipped
	// DurationS is the phase's wall time in seconds, on "end".
	DurationS float64 `json:"duration_s,omitempty"`
	Error     string  `json:"error,omitempty"`
	// Round is the launch's round, 1-based; 0 for campaign-level phases and
	// in journals written before rounds, where a scenario's 0 means 1.
	Round int `json:"round,omitempty"`
	// Host is the Name() of the fleet's host the line is about; empty for a
	// single host (host:) and for lines about the whole campaign.
	Host string `json:"host,omitempty"`
	// Allocation names the cluster allocation the run's hosts came from, on
	// the PhaseAllocation entry ("slurm job 42 on gpu01,gpu02").
	Allocation string `json:"allocation,omitempty"`
	// Stop is what a stop of a process group did, on an EventStopped line
	// within the step that stopped it.
	Stop *StopRecord `json:"stop,omitempty"`
	// Look is what the look before a round of a sequential campaign
	// decided, on a PhaseLook line.
	Look *LookRecord `json:"look,omitempty"`
}

// EventStopped is the Event of a journal line that records one stop of a
// process group (the server, the sweep, the power sampler) that was
// running: a line beside its step's start and end, which readers of
// phases pass over.
const EventStopped = "stopped"

// StopRecord is one stop: which process group, the signals in the order
// sent, how long it took to go after each (as timed on the host) and the
// whole stop's wall time here, host commands included.
type StopRecord struct {
	PIDFile string    `json:"pid_file"`
	PID     int       `json:"pid"`
	Signals []string  `json:"signals"`
	WaitsS  []float64 `json:"waits_s"`
	TookS   float64   `json:"took_s"`
}

// PhaseAllocation is the campaign-level journal entry that records the
// allocation (a Slurm job) a run, or a resumed part of it, ran in.
const PhaseAllocation = "allocation"

// Journal is an append-only, fsynced log of phases. Each line is written
// whole and synced before the phase it records goes on, so a process killed
// at any instant leaves at most a torn last line, which readers drop.
type Journal struct {
	mu sync.Mutex
	f  *os.File
}

// OpenJournal opens (or creates) path for appending. A torn last line left by
// a killed writer is cut off first, so the next line starts clean.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading journal %s: %w", path, err)
	}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		keep := bytes.LastIndexByte(data, '\n') + 1
		if err := f.Truncate(int64(keep)); err != nil {
			f.Close()
			return nil, fmt.Errorf("cutting the torn last line of %s: %w", path, err)
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening journal %s: %w", path, err)
	}
	return &Journal{f: f}, nil
}

// Append writes one entry as a line and fsyncs it.
func (j *Journal) Append(e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding journal entry: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing journal %s: %w", j.f.Name(), err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("syncing journal %s: %w", j.f.Name(), err)
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadJournal reads every entry of a journal file. A last line without its
// newline is torn and dropped, whether or not it parses; any other bad line
// is an error naming it.
func ReadJournal(path string) ([]JournalEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading journal: %w", err)
	}
	// A last line without its newline was never wholly written, even when
	// what did get written parses: OpenJournal cuts it before the next
	// append, so reading it here would count an entry that then vanishes.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var out []JournalEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	var pending error
	line := 0
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e JournalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			pending = fmt.Errorf("%s:%d: bad journal line: %w", path, line, err)
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading journal %s: %w", path, err)
	}
	// Every line left is complete: a bad one is damage, and an append after
	// it would bury it.
	if pending != nil {
		return nil, pending
	}
	return out, nil
}

// LaunchKey names one launch: a scenario in a round (1-based).
type LaunchKey struct {
	Scenario string
	Round    int
}

func (e JournalEntry) launch() LaunchKey { return LaunchKey{e.Scenario, max(e.Round, 1)} }

// Finished returns, per launch, the outcome of its newest attempt that
// ended ok or failed. Canceled or unfinished attempts do not count: --resume
// runs those again.
func Finished(entries []JournalEntry) map[LaunchKey]string {
	out := map[LaunchKey]string{}
	for _, e := range entries {
		if e.Phase != PhaseScenario || e.Event != "end" || e.Scenario == "" {
			continue
		}
		switch e.Outcome {
		case OutcomeOK, OutcomeFailed:
			out[e.launch()] = e.Outcome
		}
	}
	return out
}

// Attempts returns, per launch, the highest attempt number journaled.
func Attempts(entries []JournalEntry) map[LaunchKey]int {
	out := map[LaunchKey]int{}
	for _, e := range entries {
		if e.Scenario != "" && e.Attempt > out[e.launch()] {
			out[e.launch()] = e.Attempt
		}
	}
	return out
}

// PhaseTime is the total time spent in one phase across a run.
type PhaseTime struct {
	Phase   string
	Seconds float64
	Count   int
}

// PhaseTimes sums the durations of ended phases, scenario brackets left out,
// largest first: where the time went.
func PhaseTimes(entries []JournalEntry) []PhaseTime {
	by := map[string]*PhaseTime{}
	var order []string
	for _, e := range entries {
		if e.Event != "end" || e.Phase == PhaseScenario || e.Outcome == OutcomeSkipped {
			continue
		}
		p := by[e.Phase]
		if p == nil {
			p = &PhaseTime{Phase: e.Phase}
			by[e.Phase] = p
			order = append(order, e.Phase)
		}
		p.Seconds += e.DurationS
		p.Count++
	}
	out := make([]PhaseTime, 0, len(order))
	for _, name := range order {
		out = append(out, *by[name])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seconds > out[j].Seconds })
	return out
}
