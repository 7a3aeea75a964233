package faults

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
)

// resultsDiskSize is the tmpfs the results go to: room for a few small
// scenarios, so that filling it is quick.
const resultsDiskSize = "8m"

// TestResultsDiskFull fills the local results disk (a tmpfs) once the first
// scenario is done: the run must say so clearly and end, the first
// scenario's results must be intact, and once space is back `--resume` must
// finish the campaign without running the first scenario again.
func TestResultsDiskFull(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	disk := mountTmpfs(t, resultsDiskSize)
	s := spec{name: "disk-full", scenarios: []scen{{name: "a"}, {name: "b"}}}
	cfg := r.write(s)
	out := filepath.Join(disk, "run")

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, stdout, stderr := r.command(ctx, "run", cfg, "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if !waitJournal(ctx, out, done, phaseStarted("b", "launch")) {
		t.Fatalf("the run ended before scenario b launched\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	filler := fillDisk(t, disk)
	<-done
	code := cmd.ProcessState.ExitCode()
	all := stdout.String() + stderr.String()
	if code == 0 {
		t.Errorf("the run exited 0 on a full results disk\n%s", all)
	}
	if !strings.Contains(all, "no space left on device") {
		t.Errorf("the run does not say the disk is full:\n%s", all)
	}
	// The run stops on its own and says how to finish once space is back.
	if !strings.Contains(all, "resume with: bakeoff run") {
		t.Errorf("the run does not say how to resume:\n%s", all)
	}
	for _, p := range panicMarks {
		if strings.Contains(all, p) {
			t.Fatalf("the run printed %q:\n%s", p, all)
		}
	}
	// What was measured before the disk filled is intact.
	recs, err := results.ReadRecords(filepath.Join(out, "a", "round-1", results.RequestsFile))
	if err != nil {
		t.Fatalf("scenario a's records after the disk filled: %v", err)
	}
	if n := countMeasured(recs); n != defaultRequest*2 {
		t.Errorf("scenario a has %d measured records after the disk filled, want %d", n, defaultRequest*2)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	res := r.bakeoff("run", cfg, "--resume", out)
	if res.code != 0 {
		t.Fatalf("resume once space is back: %s", res)
	}
	r.checkEndState(out, s, nil)
}

// mountTmpfs mounts a tmpfs of size on a fresh directory, unmounted at
// cleanup.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the disk-full fault needs root", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			// A file still open (a process not yet reaped) keeps it busy;
			// detach it so the test leaves no mount behind.
			if out2, err2 := exec.Command("umount", "-l", dir).CombinedOutput(); err2 != nil {
				t.Errorf("unmounting %s: %v %s; %v %s", dir, err, out, err2, out2)
			}
		}
	})
	return dir
}

// fillDisk writes a file until the file system is full and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatalf("filling %s: %v", dir, err)
		}
	}
	// The last partial pages too.
	for _, n := range []int{4096, 512, 64, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return p
}
