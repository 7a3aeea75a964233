package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// A sequential campaign (`rounds: {min, max}`) looks at its comparisons
// before each round past min: a variant whose comparisons are all decided
// is launched no more, and when none is open the rounds left are not run.
// The look itself (the verdict's sequential rule, and the planner's
// requests for the rounds to come) is the caller's: the orchestrator only
// acts on what it says, so that it needs no statistics of its own, and the
// report, which replays the same looks from the same records, agrees.

// LookFunc looks at the run in runDir after round rounds have been run: it
// says which variants are still open and how many requests per level the
// next rounds take.
type LookFunc func(ctx context.Context, runDir string, rounds int) (Look, error)

// Look is what a look decided.
type Look struct {
	// Open are the variants with a comparison still open, in campaign
	// order; the baseline runs while any is.
	Open []string
	// Stopped says, one line per variant that stopped, why ("eagle3-topk4:
	// decided after 3 rounds").
	Stopped []string
	// Scale, when above 1, is the multiple of the `auto` request count
	// every level of the next rounds takes (the planner's, for a sweep of
	// requests: auto); 0 or 1 keeps the campaign's.
	Scale int
	// Plan is the planner's line, for the log; empty without one.
	Plan string
	// Race is set by the look of a selection campaign (question: select):
	// Open is then every configuration the next round launches, the
	// baseline among them only while it can still win, since a race has
	// no baseline to compare with.
	Race bool
}

// LookRecord is a look as the journal keeps it, on a PhaseLook line.
type LookRecord struct {
	// After is the rounds the look saw; Open and Stopped as in Look.
	After   int      `json:"after"`
	Open    []string `json:"open"`
	Stopped []string `json:"stopped,omitempty"`
	Race    bool     `json:"race,omitempty"`
	Scale   int      `json:"scale,omitempty"`
	Plan    string   `json:"plan,omitempty"`
}

// PhaseLook is the journal phase of a look before a round of a
// sequential campaign (Event "end", Round the round it gates, Look what it
// decided).
const PhaseLook = "look"

// gate decides, before round j of a sequential campaign, which of its
// launches run: the baseline and the variants still open, in the
// counterbalanced order of that subset. It reports false when none of its
// variants is open, so the round is not run. The look is taken once per
// replicate, before its first part starts (the scheduler has waited for
// the earlier replicates), and gates every part of it alike. A look that
// fails runs the round whole (measuring more never hurts the verdict) and
// says so.
func (o *orch) gate(ctx context.Context, j *roundJob) bool {
	if !o.c.Sequential() || o.opt.Look == nil || j.replicate <= o.c.MinRounds {
		return true
	}
	look, ok := o.lookBefore(ctx, j.replicate)
	if !ok {
		return true
	}
	keep := append([]string{o.c.Baseline}, look.Open...)
	if look.Race {
		keep = look.Open
	}
	byName := map[string]plannedLaunch{}
	for _, pl := range j.launches {
		byName[pl.key.Scenario] = pl
	}
	var all, names []string // the round's scenarios in campaign order, and those still launched
	open := false
	for _, sc := range o.c.Scenarios {
		if _, ok := byName[sc.Name]; !ok {
			continue
		}
		all = append(all, sc.Name)
		if slices.Contains(keep, sc.Name) {
			names = append(names, sc.Name)
			open = open || sc.Name != o.c.Baseline || look.Race
		}
	}
	if !open {
		// The manifest's rows are what ran: a round no variant needs is
		// left empty, so that the report, a resume and a reader of
		// manifest.json do not take it for a round still to come.
		o.recordRow(j.round, []string{})
		return false
	}
	row := campaign.OrderStill(all, names, j.replicate)
	j.launches = j.launches[:0]
	for _, name := range row {
		j.launches = append(j.launches, byName[name])
	}
	j.scale = look.Scale
	o.recordRow(j.round, row)
	return true
}

// recordRow writes round's launches, as a look left them, to the manifest.
func (o *orch) recordRow(round int, row []string) {
	o.mu.Lock()
	o.man.Order[round-1] = row
	err := o.writeManifest()
	o.mu.Unlock()
	if err != nil {
		o.noteLocalWrite(err)
		o.warn("", fmt.Sprintf("recording round %d's launches in the manifest: %v", round, err))
	}
}

// lookBefore is the look before replicate r, taken (and journaled) by the
// first of its parts to ask; false when it failed, and the parts run whole.
func (o *orch) lookBefore(ctx context.Context, r int) (Look, bool) {
	o.lookMu.Lock()
	defer o.lookMu.Unlock()
	if got, ok := o.looks[r]; ok {
		return got.look, got.ok
	}
	look, err := o.opt.Look(ctx, o.runDir, r-1)
	if o.looks == nil {
		o.looks = map[int]takenLook{}
	}
	o.looks[r] = takenLook{look, err == nil}
	if err != nil {
		o.warn("", fmt.Sprintf("the look before round %d failed, so the round runs every scenario: %v", r, err))
		return look, false
	}
	rec := LookRecord{After: r - 1, Open: look.Open, Stopped: look.Stopped, Scale: look.Scale, Plan: look.Plan, Race: look.Race}
	o.journal(JournalEntry{Time: o.now(), Phase: PhaseLook, Event: "end", Round: r, Look: &rec})
	o.emit(Event{Time: o.now(), Kind: EventLook, Round: r, Rounds: o.replicates(), Message: lookLine(rec)})
	return look, true
}

// takenLook is a look taken before a replicate, and whether it succeeded.
type takenLook struct {
	look Look
	ok   bool
}

// replicates is how many replicates the campaign lays out: its rounds,
// whether or not they are split into parts.
func (o *orch) replicates() int {
	if o.man.Split() {
		return o.man.Replicates[len(o.man.Replicates)-1]
	}
	return len(o.man.Order)
}

// lookLine is a look for the log: "look after 3 rounds: eagle3-topk4:
// decided after 3 rounds; open: a, b; plan: …".
func lookLine(r LookRecord) string {
	var parts []string
	parts = append(parts, r.Stopped...)
	switch {
	case len(r.Open) == 0 && r.Race:
		parts = append(parts, "the race is over: no more rounds")
	case len(r.Open) == 0:
		parts = append(parts, "every variant decided: no more rounds")
	case r.Race:
		parts = append(parts, "next: "+strings.Join(r.Open, ", "))
	default:
		parts = append(parts, "open: "+strings.Join(r.Open, ", "))
	}
	if r.Plan != "" {
		parts = append(parts, r.Plan)
	}
	return fmt.Sprintf("look after %d rounds: %s", r.After, strings.Join(parts, "; "))
}
