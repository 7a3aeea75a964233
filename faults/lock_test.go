package faults

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSecondCampaignSameHost starts a second campaign while a first holds
// the host: the second must refuse at once, naming the holder, and leave
// the first to finish untouched.
func TestSecondCampaignSameHost(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	first := spec{name: "first", scenarios: []scen{{name: "a"}, {name: "b"}}}
	cfg1 := r.write(first)
	second := spec{name: "second", scenarios: []scen{{name: "z"}}}
	cfg2 := r.write(second)
	out1 := filepath.Join(r.dir, "run1")

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, stdout, stderr := r.command(ctx, "run", cfg1, "--out", out1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if !waitJournal(ctx, out1, done, phaseStarted("a", "ready")) {
		t.Fatalf("the first campaign ended early\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	res := r.bakeoff("run", cfg2, "--out", filepath.Join(r.dir, "run2"))
	if res.code == 0 {
		t.Errorf("the second campaign ran on a held host:\n%s", res)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if !strings.Contains(res.stderr+res.stdout, pid) {
		t.Errorf("the refusal does not name the holder (pid %s):\n%s", pid, res)
	}
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the first campaign: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r.checkEndState(out1, first, nil)
}
