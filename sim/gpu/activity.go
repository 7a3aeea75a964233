package gpu

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The modelled power of a fake GPU: idle plus a part proportional to its
// utilisation, P = GPUIdleW + (GPUMaxW − GPUIdleW) · util. docs/SIM.md says
// where the constants come from.
const (
	// GPUMaxW is the board's power limit: NVIDIA lists the RTX PRO 6000
	// Blackwell Server Edition at up to 600 W (configurable).
	GPUMaxW = 600.0
	// GPUIdleW is an idle board with memory held and clocks down; NVIDIA
	// publishes no idle figure, so this is an assumption of the order large
	// boards read idle.
	GPUIdleW = 30.0
	// GPUIdleSMMHz and GPUBoostSMMHz are the SM clock idle and busy.
	GPUIdleSMMHz  = 210
	GPUBoostSMMHz = 2430
)

// ModelPowerW is the modelled power of one GPU at utilisation util (0–1).
func ModelPowerW(util float64) float64 {
	return GPUIdleW + (GPUMaxW-GPUIdleW)*min(max(util, 0), 1)
}

const (
	// utilWindow is the period nvidia-smi's utilization.gpu looks back
	// over, in simulated time: "the past sample period", between 1/6 s and
	// 1 s by product (nvidia-smi(1)); the longest is taken, as it is also
	// the period NVML averages power.draw over on Ampere and newer boards.
	utilWindow = time.Second
	// minActivityTick and maxActivityTick bound (wall time) how often the
	// server records how long its engine has been busy: a quarter of
	// utilWindow in wall time, within these.
	minActivityTick = 50 * time.Millisecond
	maxActivityTick = 100 * time.Millisecond
	activityPrefix  = "activity-"
)

// Activity is what a live server registers for the fake nvidia-smi, beside
// the holders: which GPUs its engine runs on and marks of how long the
// engine has been busy stepping, so that utilisation (and the modelled
// power) come from the engine's real activity.
type Activity struct {
	PID  int   `json:"pid"`
	GPUs []int `json:"gpus"`
	// Speed is the server's --sim-speed: utilWindow is simulated time.
	Speed float64 `json:"speed"`
	// Marks are [wall time Unix ns, busy wall ns since start] pairs, oldest
	// first, one per tick over the last two utilisation windows.
	Marks [][2]int64 `json:"marks"`
}

func activityPath(dir string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("%s%d.json", activityPrefix, pid))
}

// RecordActivity writes the activity file of the server with process id
// pid every tick until ctx ends, then removes it. busy returns the engine's
// busy wall time so far; speed is the server's --sim-speed.
//
// An idle engine's file is written until it shows a whole window without
// work, then left until the engine works again: Utilization reads 0 from
// that file at any age, and Busy its unchanged total. A sim mostly waits
// (loading, health polls, between levels), and a file renamed into place
// every 50 ms was most of what an idle sim cost its host's CPU.
func RecordActivity(ctx context.Context, dir string, pid int, gpus []int, speed float64, busy func() time.Duration, now func() time.Time) {
	a := Activity{PID: pid, GPUs: gpus, Speed: speed}
	path := activityPath(dir, a.PID)
	defer os.Remove(path)
	window := a.window()
	tick := time.NewTicker(min(max(window/4, minActivityTick), maxActivityTick))
	defer tick.Stop()
	var quietFrom int64 // when busy last changed
	shownQuiet := false // the file on disk already shows a window without work
	for {
		t, b := now().UnixNano(), int64(busy())
		if n := len(a.Marks); n == 0 || a.Marks[n-1][1] != b {
			quietFrom, shownQuiet = t, false
		}
		a.Marks = append(a.Marks, [2]int64{t, b})
		for len(a.Marks) > 2 && t-a.Marks[1][0] >= 2*int64(window) {
			a.Marks = a.Marks[1:]
		}
		if !shownQuiet {
			if js, err := json.Marshal(a); err == nil && WriteAtomic(dir, path, js) == nil {
				// A missed write only coarsens the next reading.
				shownQuiet = t-quietFrom >= int64(window)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// window is utilWindow in wall time.
func (a Activity) window() time.Duration {
	if a.Speed <= 0 {
		return utilWindow
	}
	return time.Duration(float64(utilWindow) / a.Speed)
}

// Utilization is the share of the last utilisation window (up to the
// newest mark) the engine was busy, 0–1: 0 when the newest mark is older
// than the window and a tick (a stopped server).
func (a Activity) Utilization(now time.Time) float64 {
	n := len(a.Marks)
	if n < 2 {
		return 0
	}
	w := int64(a.window())
	last := a.Marks[n-1]
	if now.UnixNano()-last[0] > w+int64(maxActivityTick) {
		return 0
	}
	from := a.Marks[0]
	for _, m := range a.Marks {
		if last[0]-m[0] >= w {
			from = m
		}
	}
	if last[0] <= from[0] {
		return 0
	}
	return min(1, max(0, float64(last[1]-from[1])/float64(last[0]-from[0])))
}

// Busy is the engine's busy wall time since it started, at the newest mark.
func (a Activity) Busy() time.Duration {
	if len(a.Marks) == 0 {
		return 0
	}
	return time.Duration(a.Marks[len(a.Marks)-1][1])
}

// GPUActivity is what the live servers did on one GPU: the utilisation
// (0–1, the busiest server's) and their engines' busy time since they
// started.
type GPUActivity struct {
	Util float64
	Busy time.Duration
}

// LiveActivity returns each GPU's activity from the activity files of the
// live servers in dir; files of dead servers are removed.
func LiveActivity(dir string, now time.Time) (map[int]GPUActivity, error) {
	out := map[int]GPUActivity{}
	err := EachStateFile(dir, activityPrefix, func(path string, b []byte) {
		var a Activity
		if json.Unmarshal(b, &a) != nil {
			return
		}
		if !PIDAlive(a.PID) {
			os.Remove(path)
			return
		}
		u := a.Utilization(now)
		for _, g := range a.GPUs {
			ga := out[g]
			ga.Util, ga.Busy = max(ga.Util, u), ga.Busy+a.Busy()
			out[g] = ga
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WriteAtomic writes b to path through a temporary file in dir and a rename,
// so that a reader never sees half a file.
func WriteAtomic(dir, path string, b []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-activity-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
