package contention

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// WorkerEnv marks a process started as a contention worker: Main then runs
// the worker its arguments name instead of the tests.
const WorkerEnv = "BAKEOFF_CONTENTION_WORKER"

// The workers' roles, the first argument of a worker process.
const (
	roleSpin  = "spin"  // spin until killed
	roleSpawn = "spawn" // SEED: one burst process after another until killed
	roleBurst = "burst" // DURATION: spin for DURATION, then exit
	rolePulse = "pulse" // SEED: spin and sleep by turns until killed
)

// spinCheck is how many loop iterations a spin runs between looks at the
// clock: about a tenth of a millisecond on a current core.
const spinCheck = 1 << 14

// sink keeps the spin loop's arithmetic from being optimised away.
var sink uint64

// Main runs a contention worker and exits when this process was started as
// one (WorkerEnv set), and returns false otherwise. A test binary that
// starts loads calls it first in TestMain.
func Main() bool {
	if os.Getenv(WorkerEnv) == "" {
		return false
	}
	if err := runWorker(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "contention worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

func runWorker(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no role given")
	}
	end := time.Now().Add(WorkerLifetime)
	switch args[0] {
	case roleSpin:
		spin(end)
		return nil
	case roleBurst:
		if len(args) != 2 {
			return fmt.Errorf("burst: want a duration")
		}
		d, err := time.ParseDuration(args[1])
		if err != nil {
			return fmt.Errorf("burst: %w", err)
		}
		spin(time.Now().Add(d))
		return nil
	case roleSpawn, rolePulse:
		if len(args) != 2 {
			return fmt.Errorf("%s: want a seed", args[0])
		}
		seed, err := strconv.ParseUint(args[1], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: seed: %w", args[0], err)
		}
		rng := rand.New(rand.NewPCG(seed, seed^0xc0417e))
		if args[0] == roleSpawn {
			return spawn(rng, end)
		}
		pulse(rng, end)
		return nil
	}
	return fmt.Errorf("unknown role %q", args[0])
}

// spin keeps one core busy until end.
func spin(end time.Time) {
	x := sink
	for time.Now().Before(end) {
		for i := range uint64(spinCheck) {
			x = x*6364136223846793005 + i
		}
	}
	sink = x
}

// spawn runs burst processes one after another until end: a build job's
// compiler invocations. Each burst is a process of this binary, in this
// worker's process group (which Stop kills), dying with it.
func spawn(rng *rand.Rand, end time.Time) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	for time.Now().Before(end) {
		d := between(rng, BurstMin, BurstMax)
		cmd := exec.Command(exe, roleBurst, d.String())
		cmd.Env = os.Environ()
		cmd.SysProcAttr = burstAttr()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("spawn: a burst of %v: %w", d, err)
		}
	}
	return nil
}

// pulse spins and sleeps by turns until end, each turn drawn between
// PulseMin and PulseMax.
func pulse(rng *rand.Rand, end time.Time) {
	for time.Now().Before(end) {
		spin(time.Now().Add(between(rng, PulseMin, PulseMax)))
		time.Sleep(between(rng, PulseMin, PulseMax))
	}
}

// between draws a duration uniformly from [lo, hi).
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
