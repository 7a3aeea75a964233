package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// LockFile is the name of the host lock inside the workdir.
const LockFile = "bakeoff.lock"

// LockInfo is what a lock file holds: who runs a campaign on the host.
type LockInfo struct {
	Machine  string    `json:"machine"` // hostname of the machine running the orchestrator
	PID      int       `json:"pid"`     // the orchestrator's process id there
	Started  time.Time `json:"started"`
	Campaign string    `json:"campaign"`
	RunDir   string    `json:"run_dir"`
}

func (l LockInfo) String() string {
	return fmt.Sprintf("campaign %q (pid %d on %s, started %s, results %s)",
		l.Campaign, l.PID, l.Machine, l.Started.UTC().Format(time.RFC3339), l.RunDir)
}

// LockHeldError says another campaign holds the host.
type LockHeldError struct {
	Host   string
	Path   string
	Holder LockInfo
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("host %s is busy: %s holds %s; wait for it, or remove the file if that process is gone",
		e.Host, e.Holder, e.Path)
}

// hostLock is a held lock; release removes it if it is still ours.
type hostLock struct {
	h    remote.Host
	path string
	info LockInfo
}

// acquireLock creates the lock file atomically (the shell's noclobber opens
// with O_EXCL), so of two campaigns started at once exactly one wins. A lock
// whose holder is a dead process on this same machine is stale and taken over;
// a holder on another machine cannot be checked from here, so it is refused.
func acquireLock(ctx context.Context, h remote.Host, workdir string, me LockInfo, pidAlive func(int) bool) (*hostLock, error) {
	p := path.Join(workdir, LockFile)
	body, err := json.Marshal(me)
	if err != nil {
		return nil, err
	}
	create := fmt.Sprintf("umask 077 && mkdir -p %s && (set -C; printf '%%s\\n' %s > %s)",
		campaign.ShellQuote(workdir), campaign.ShellQuote(string(body)), campaign.ShellQuote(p))
	for try := 0; try < 2; try++ {
		_, _, err := h.Run(ctx, create)
		if err == nil {
			return &hostLock{h: h, path: p, info: me}, nil
		}
		var exit *remote.ExitError
		if !errors.As(err, &exit) {
			return nil, fmt.Errorf("locking host %s: %w", h.Name(), err)
		}
		holder, rerr := readLock(ctx, h, p)
		if rerr != nil {
			return nil, fmt.Errorf("locking host %s: %w", h.Name(), rerr)
		}
		stale := holder.Machine == me.Machine && holder.PID > 0 && !pidAlive(holder.PID)
		if !stale || try > 0 {
			return nil, &LockHeldError{Host: h.Name(), Path: p, Holder: holder}
		}
		if _, _, err := h.Run(ctx, "rm -f "+campaign.ShellQuote(p)); err != nil {
			return nil, fmt.Errorf("removing stale lock %s on %s: %w", p, h.Name(), err)
		}
	}
	return nil, fmt.Errorf("locking host %s: lost the race for %s", h.Name(), p)
}

func readLock(ctx context.Context, h remote.Host, p string) (LockInfo, error) {
	out, _, err := h.Run(ctx, "cat "+campaign.ShellQuote(p))
	if err != nil {
		return LockInfo{}, fmt.Errorf("reading lock %s: %w", p, err)
	}
	var info LockInfo
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &info); err != nil {
		// A lock we cannot parse is still a lock: refuse rather than guess.
		return LockInfo{Machine: "?", Campaign: strings.TrimSpace(string(out))}, nil
	}
	return info, nil
}

// release removes the lock if it still holds our pid and start time, so a
// lock taken over by someone else is never removed by us.
func (l *hostLock) release(ctx context.Context) error {
	cur, err := readLock(ctx, l.h, l.path)
	if err != nil {
		return err
	}
	rm := "rm -f " + campaign.ShellQuote(l.path)
	if cur.PID != l.info.PID || cur.Machine != l.info.Machine || !cur.Started.Equal(l.info.Started) {
		// A dry run's host read no lock: it shows the removal instead.
		remote.ShowBranch(l.h, "if the lock still names this run", rm)
		return nil
	}
	if _, _, err := l.h.Run(ctx, rm); err != nil {
		return fmt.Errorf("releasing lock %s on %s: %w", l.path, l.h.Name(), err)
	}
	return nil
}
