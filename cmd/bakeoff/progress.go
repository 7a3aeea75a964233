package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/loadgen"
	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// progress draws a campaign's events: a live display on a terminal, plain
// timestamped lines otherwise (nohup, tmux logs, CI).
type progress interface {
	event(orchestrator.Event)
	close()
}

// newProgress is the display of a campaign whose launches count counts
// (the look of a sequential campaign tells it of stopped variants).
func newProgress(e *env, sweepTotal int, count *launchCounter) progress {
	if e.IsTerminal {
		return newLiveProgress(e.Stdout, e.Now, sweepTotal, count)
	}
	return newPlainProgress(e.Stdout, count)
}

// plainProgress writes one timestamped line per event worth keeping in a log.
type plainProgress struct {
	w     io.Writer
	count *launchCounter
}

func newPlainProgress(w io.Writer, count *launchCounter) *plainProgress {
	return &plainProgress{w: w, count: count}
}

func (p *plainProgress) event(ev orchestrator.Event) {
	ev = p.count.number(ev)
	stamp := ev.Time.UTC().Format("15:04:05")
	if ev.Kind == orchestrator.EventLook {
		for _, line := range lookLines(ev.Message) {
			fmt.Fprintf(p.w, "%s %s\n", stamp, line)
		}
	} else if line := eventLine(ev); line != "" {
		fmt.Fprintf(p.w, "%s %s\n", stamp, line)
	}
	if ev.Kind == orchestrator.EventLook {
		if note := p.count.takeNote(); note != "" {
			fmt.Fprintf(p.w, "%s %s\n", stamp, note)
		}
	}
}

func (p *plainProgress) close() {}

// eventLine is the one-line text of an event, or "" for events too frequent
// for a log (sweep progress ticks).
func eventLine(ev orchestrator.Event) string {
	who := ""
	switch {
	case ev.Scenario != "" && ev.Total > 0:
		// Index and Total are the launchCounter's.
		who = fmt.Sprintf("[%d/%d %s%s%s] ", ev.Index, ev.Total, ev.Scenario, roundSuffix(ev), hostSuffix(ev))
	case ev.Scenario != "":
		who = "[" + ev.Scenario + roundSuffix(ev) + hostSuffix(ev) + "] "
	case ev.Host != "":
		who = "[" + ev.Host + "] "
	}
	switch ev.Kind {
	case orchestrator.EventCampaignStart:
		if ev.Parts > 0 {
			return fmt.Sprintf("campaign: %d launches (%d rounds split into %d parts, each the baseline and a share of the variants) on %d hosts (%s), a part at a time on each, results in %s",
				ev.Total, ev.Rounds, ev.Parts, ev.Hosts, ev.Message, ev.RunDir)
		}
		if ev.Hosts > 1 {
			return fmt.Sprintf("campaign: %d launches (%d scenarios × %d rounds) on %d hosts (%s), a round at a time on each, results in %s",
				ev.Total, ev.Total/max(ev.Rounds, 1), ev.Rounds, ev.Hosts, ev.Message, ev.RunDir)
		}
		if ev.Rounds > 1 {
			return fmt.Sprintf("campaign: %d launches (%d scenarios × %d rounds) on %s, results in %s",
				ev.Total, ev.Total/ev.Rounds, ev.Rounds, ev.Message, ev.RunDir)
		}
		return fmt.Sprintf("campaign: %d scenarios on %s, results in %s", ev.Total, ev.Message, ev.RunDir)
	case orchestrator.EventScenarioStart:
		return who + "start"
	case orchestrator.EventScenarioSkip:
		return who + "already " + ev.Outcome + " in this run, skipped"
	case orchestrator.EventPhaseStart:
		return who + string(ev.Phase) + " …"
	case orchestrator.EventPhaseEnd:
		line := fmt.Sprintf("%s%s %s in %s", who, ev.Phase, ev.Outcome, fmtSeconds(ev.Duration))
		if ev.Err != nil && ev.Phase != "" {
			line += ": " + firstLine(ev.Err.Error())
		}
		return line
	case orchestrator.EventServerLog:
		return who + "log: " + truncate(ev.Message, 160)
	case orchestrator.EventWaiting:
		return who + ev.Message
	case orchestrator.EventSweep:
		if line := sweepLine(ev.Sweep); line != "" {
			return who + line
		}
		return ""
	case orchestrator.EventScenarioEnd:
		if r := ev.Result; r != nil && r.FailedPhase != "" {
			return fmt.Sprintf("%s%s at %s: %s", who, ev.Outcome, r.FailedPhase, firstLine(r.Reason))
		}
		return who + ev.Outcome
	case orchestrator.EventWarning:
		return who + "warning: " + ev.Message
	case orchestrator.EventCampaignEnd:
		return "campaign done"
	case orchestrator.EventHostLost:
		if ev.Round > 0 {
			round := roundSuffix(ev)
			if round == "" {
				round = fmt.Sprintf(" round %d", ev.Round)
			}
			return fmt.Sprintf("host %s lost during%s: %s; the round runs again whole on another host", ev.Host, round, firstLine(ev.Message))
		}
		return fmt.Sprintf("host %s lost: %s", ev.Host, firstLine(ev.Message))
	case orchestrator.EventLook:
		return ev.Message
	case orchestrator.EventRoundOutOfTime:
		return "out of time: " + ev.Message
	}
	return ""
}

// lookBreaks are where a look's line (orchestrator's "look after 3
// rounds: …; open: …; plan: …; since the last look: …") is broken for
// the progress lines: before the plan (a plan line, or what a budget
// buys) and before what changed since the plan before it.
var lookBreaks = []string{"; plan: ", "; with ", "; since "}

// lookLines is a look's line as the progress shows it: what the look
// decided, then its plan and what changed since the last one, each on a
// line of its own, indented, so that a look of several hundred characters
// reads as three sentences.
func lookLines(msg string) []string {
	var lines []string
	for {
		at := -1
		for _, b := range lookBreaks {
			if i := strings.Index(msg, b); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at < 0 {
			break
		}
		lines = append(lines, msg[:at])
		msg = "  " + msg[at+2:]
	}
	return append(lines, msg)
}

// roundSuffix names the round of a launch in a campaign of several: the
// campaign's round, and with split rounds the results round of its part
// as well, the one the run's files are named by.
func roundSuffix(ev orchestrator.Event) string {
	switch {
	case ev.Replicate > 0 && ev.Replicate != ev.Round:
		return fmt.Sprintf(" round %d (results round %d)", ev.Replicate, ev.Round)
	case ev.Rounds > 1 && ev.Round > 0:
		return fmt.Sprintf(" round %d", ev.Round)
	}
	return ""
}

// hostSuffix names the host of a launch in a fleet.
func hostSuffix(ev orchestrator.Event) string {
	if ev.Host != "" {
		return " on " + ev.Host
	}
	return ""
}

// sweepLine describes a load generator event; progress ticks give "".
func sweepLine(ev *loadgen.Event) string {
	if ev == nil {
		return ""
	}
	switch ev.Kind {
	case loadgen.EventStart:
		return "sweep: model " + ev.Message
	case loadgen.EventWarmup:
		if ev.Done > 0 {
			return "" // the warm-up's progress, which the live display draws
		}
		return fmt.Sprintf("sweep: warm-up %d requests", ev.Total)
	case loadgen.EventLevelStart:
		return fmt.Sprintf("sweep: %s, %d requests", measure.LevelName(ev.Level), ev.Total)
	case loadgen.EventLevelEnd:
		if ev.Summary != nil {
			return measure.FormatLevel(*ev.Summary)
		}
		return fmt.Sprintf("sweep: %s done", measure.LevelName(ev.Level))
	case loadgen.EventWarning:
		return "sweep warning: " + ev.Message
	}
	return ""
}

func fmtSeconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
