package cmdline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/keepalive"
)

// Fault names accepted by --sim-fault.
const (
	FaultDieDuringLoad       = "die-during-load"
	FaultHangDuringLoad      = "hang-during-load"
	FaultCrashOnFirstRequest = "crash-on-first-request"
	FaultCrashAfter          = "crash-after"    // =N completed requests
	FaultIgnoreSigterm       = "ignore-sigterm" // =D wall time; bare: until killed
	FaultHoldMemory          = "hold-memory"    // =D wall time
	FaultOrphanChildren      = "orphan-children"
	FaultWrongOutput         = "wrong-output"
	// Connection behaviours of real servers rather than failures
	// (internal/keepalive): llama.cpp's llama-server closes a kept-alive
	// connection after each streamed answer; servers and proxies close
	// connections left idle.
	FaultCloseAfterStream = "close-after-stream"
	FaultIdleClose        = "idle-close" // =D wall time
)

// Faults are the failures switched on for one server. Durations are wall
// time: they exercise the orchestrator's own wall-clock timeouts (stop grace,
// GPU-free wait), which --sim-speed does not scale.
//
// A test that asserts what the orchestrator does at a timeout wants the
// fault to outlast it whatever the load: a bare ignore-sigterm ignores
// SIGTERM until the server is killed, so that "the stop needed SIGKILL" is
// decided by the stop alone, not by which of two timers fires first.
type Faults struct {
	DieDuringLoad       bool
	HangDuringLoad      bool
	CrashOnFirstRequest bool
	CrashAfter          int           // 0: off; crash when this many requests have completed
	IgnoreSigterm       time.Duration // 0: off; keep serving this long after SIGTERM (IgnoreForever: until SIGKILL)
	HoldMemory          time.Duration // 0: off; memory stays reported this long after exit
	OrphanChildren      bool
	WrongOutput         bool
	CloseAfterStream    bool
	IdleClose           time.Duration // 0: off; close connections idle this long
	names               []string
}

// Add parses one --sim-fault value, NAME or NAME=ARG.
func (f *Faults) Add(v string) error {
	name, arg, hasArg := strings.Cut(v, "=")
	needArg := func() error {
		if !hasArg || arg == "" {
			return fmt.Errorf("fault %s needs a value (%s=...)", name, name)
		}
		return nil
	}
	noArg := func() error {
		if hasArg {
			return fmt.Errorf("fault %s takes no value", name)
		}
		return nil
	}
	var err error
	switch name {
	case FaultDieDuringLoad:
		err = noArg()
		f.DieDuringLoad = true
	case FaultHangDuringLoad:
		err = noArg()
		f.HangDuringLoad = true
	case FaultCrashOnFirstRequest:
		err = noArg()
		f.CrashOnFirstRequest = true
	case FaultOrphanChildren:
		err = noArg()
		f.OrphanChildren = true
	case FaultWrongOutput:
		err = noArg()
		f.WrongOutput = true
	case FaultCrashAfter:
		if err = needArg(); err == nil {
			f.CrashAfter, err = strconv.Atoi(arg)
			if err == nil && f.CrashAfter < 1 {
				err = fmt.Errorf("crash-after needs N ≥ 1, got %d", f.CrashAfter)
			}
		}
	case FaultCloseAfterStream:
		err = noArg()
		f.CloseAfterStream = true
	case FaultIgnoreSigterm:
		if !hasArg {
			f.IgnoreSigterm = IgnoreForever
			break
		}
		fallthrough
	case FaultHoldMemory, FaultIdleClose:
		if err = needArg(); err == nil {
			var d time.Duration
			d, err = time.ParseDuration(arg)
			if err == nil && d <= 0 {
				err = fmt.Errorf("%s needs a positive duration, got %s", name, arg)
			}
			switch name {
			case FaultIgnoreSigterm:
				f.IgnoreSigterm = d
			case FaultHoldMemory:
				f.HoldMemory = d
			default:
				f.IdleClose = d
			}
		}
	default:
		return fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(FaultNames(), ", "))
	}
	if err != nil {
		return err
	}
	f.names = append(f.names, v)
	return nil
}

// IgnoreForever is IgnoreSigterm for a bare ignore-sigterm: longer than any
// campaign, so in effect until SIGKILL.
const IgnoreForever = time.Duration(1<<63 - 1)

// keepAlive is the connection policy the faults ask for.
func (f Faults) KeepAlive() keepalive.Policy {
	return keepalive.Policy{AfterStream: f.CloseAfterStream, Idle: f.IdleClose}
}

// Names returns the faults as given, for the log.
func (f Faults) Names() []string { return append([]string(nil), f.names...) }

// FaultNames lists every fault name, sorted.
func FaultNames() []string {
	n := []string{FaultDieDuringLoad, FaultHangDuringLoad, FaultCrashOnFirstRequest, FaultCrashAfter,
		FaultIgnoreSigterm, FaultHoldMemory, FaultOrphanChildren, FaultWrongOutput, FaultCloseAfterStream, FaultIdleClose}
	sort.Strings(n)
	return n
}
