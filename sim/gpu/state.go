package gpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Holder is one process holding "GPU memory", registered as one small JSON
// file in the state directory so that the fake nvidia-smi, a separate
// process, can see it.
type Holder struct {
	PID  int    `json:"pid"`
	GPU  int    `json:"gpu"`
	MiB  int    `json:"mib"`
	Name string `json:"name"` // process_name, e.g. sglang::scheduler_TP0
	// HoldFor is how long the memory stays reported after the process dies
	// (the hold-memory fault), and HeldUntil when that ends (Unix ns; set
	// by the process on its way out or by nvidia-smi when it first sees the
	// process dead).
	HoldFor   time.Duration `json:"hold_for,omitempty"`
	HeldUntil int64         `json:"held_until,omitempty"`
}

const HolderPrefix = "holder-"

func holderPath(dir string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("%s%d.json", HolderPrefix, pid))
}

// WriteHolder registers or updates h, atomically (write then rename).
func WriteHolder(dir string, h Holder) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating sim state dir: %w", err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	path := holderPath(dir, h.PID)
	if err := WriteAtomic(dir, path, b); err != nil {
		return fmt.Errorf("writing holder %s: %w", path, err)
	}
	return nil
}

// RemoveHolder unregisters the holder of pid.
func RemoveHolder(dir string, pid int) error {
	err := os.Remove(holderPath(dir, pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// LiveHolders returns the holders that count now: live processes, and dead
// ones still inside their hold time. Holders that no longer count are
// removed; a dead holder with a hold time but no end yet gets one from now.
func LiveHolders(dir string, now time.Time) ([]Holder, error) {
	var out []Holder
	err := EachStateFile(dir, HolderPrefix, func(path string, b []byte) {
		var h Holder
		if json.Unmarshal(b, &h) != nil {
			return
		}
		if !PIDAlive(h.PID) {
			if h.HoldFor <= 0 {
				os.Remove(path)
				return
			}
			if h.HeldUntil == 0 {
				h.HeldUntil = now.Add(h.HoldFor).UnixNano()
				WriteHolder(dir, h)
			}
			if now.UnixNano() >= h.HeldUntil {
				os.Remove(path)
				return
			}
		}
		out = append(out, h)
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GPU != out[j].GPU {
			return out[i].GPU < out[j].GPU
		}
		return out[i].PID < out[j].PID
	})
	return out, nil
}

// EachStateFile calls fn with the path and content of every PREFIX*.json file
// in the sim state dir. A missing dir has no files; a file removed between
// listing and reading (its server ended) is skipped.
func EachStateFile(dir, prefix string, fn func(path string, b []byte)) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading sim state dir: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		fn(path, b)
	}
	return nil
}

// SimGPUsEnv names the environment variable that sets how many GPUs the
// fake host (and nvidia-smi) has; SimStateEnv the one for --sim-state.
const (
	SimGPUsEnv  = "BAKEOFF_SIM_GPUS"
	SimStateEnv = "BAKEOFF_SIM_STATE"
)

// DefaultStateDir is $BAKEOFF_SIM_STATE, else $TMPDIR/bakeoff-sim-state-<uid>.
func DefaultStateDir(getenv func(string) string) string {
	if d := getenv(SimStateEnv); d != "" {
		return d
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, fmt.Sprintf("bakeoff-sim-state-%d", os.Getuid()))
}
