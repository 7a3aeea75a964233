package testhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killWait is how long killNamespace waits for SIGKILLed processes to go.
const killWait = 20 * time.Second

// Pids lists the processes inside a namespace (`ip netns pids`).
func nsPids(ctx context.Context, ns string) ([]int, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil, fmt.Errorf("listing processes in %s: %w", ns, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// killNamespace SIGKILLs every process inside ns until none is left. A
// namespace only holds what this package started there, directly or through
// its sshd, so everything in it is ours to kill.
func killNamespace(ctx context.Context, ns string) error {
	if _, err := os.Stat(netnsDir + "/" + ns); err != nil {
		return nil
	}
	deadline := time.Now().Add(killWait)
	for {
		pids, err := nsPids(ctx, ns)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still alive in %s after SIGKILL: %v", ns, pids)
		}
		for _, p := range pids {
			if err := syscall.Kill(p, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("killing pid %d in %s: %w", p, ns, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// procComm is a process's command name, "" once it is gone.
func procComm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procCmdline is a process's argv joined by spaces, "" once it is gone.
func procCmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
