package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcsWithoutAwk: the process table read by one cat into awk and the
// shell's own loop, the fallback for a host without awk, agree: the same
// members of a group with a child in a session of its own (named through
// the tree), none of an unknown group, and the same rows for them in the
// whole table.
func TestProcsWithoutAwk(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "server.pid")
	pid, err := Start(ctx, NewLocal(), ProcessSpec{Command: `setsid sh -c 'exec sleep 300' & sleep 300`, LogFile: filepath.Join(dir, "log"), PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(ctx, NewLocal(), pidFile, 0) })
	g := strconv.Itoa(pid)
	// run runs script with awk on the PATH, or with no PATH at all: the
	// fallback then runs on the shell's builtins alone.
	run := func(script string, awk bool) []string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
		if !awk {
			cmd.Env = []string{"PATH=/nonexistent"}
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v (awk %v)", err, awk)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		slices.Sort(lines)
		return lines
	}
	// The session member outside the group, by its pid:starttime. Start
	// returns once the group's leader runs; the child's setsid comes when
	// the scheduler gets to it, later on a busy machine, so the table is
	// read until the child has left the group.
	var tree string
	for deadline := time.Now().Add(20 * time.Second); tree == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, l := range run(statScript, true) {
			f := strings.Fields(l)
			if len(f) == 6 && f[2] == g && f[3] != g {
				tree = f[1] + ":" + f[5]
			}
		}
	}
	if tree == "" {
		t.Fatalf("no child of %s outside its group in the table after 20s", g)
	}
	for _, tc := range []struct {
		name, script string
		want         int
	}{
		{"the group's members", groupMembersFn + "g=" + g + "; members", 2},
		{"the group and its tree", procsFn + `procs ` + g + ` "` + tree + `" "m "`, 3},
		{"an unknown group", groupMembersFn + "g=4194300; members", 0},
	} {
		withAwk, without := run(tc.script, true), run(tc.script, false)
		if !slices.Equal(withAwk, without) {
			t.Errorf("%s: awk %q, the shell's loop %q", tc.name, withAwk, without)
		}
		if n := len(slices.DeleteFunc(withAwk, func(s string) bool { return s == "" })); n != tc.want {
			t.Errorf("%s: %d lines %q, want %d", tc.name, n, withAwk, tc.want)
		}
	}
	// The whole table: the rows of the launched processes read alike.
	pick := func(rows []string) []string {
		return slices.DeleteFunc(rows, func(l string) bool {
			f := strings.Fields(l)
			return len(f) != 6 || (f[1] != g && f[3] != g && f[1]+":"+f[5] != tree)
		})
	}
	if a, b := pick(run(statScript, true)), pick(run(statScript, false)); len(a) != 3 || !slices.Equal(a, b) {
		t.Errorf("the table's rows of the group: awk %q, the shell's loop %q; want the same three", a, b)
	}
}

// groupMembers lists the live processes of the group or session g on h
// (groupMembersFn), for tests that wait on a group's children.
func groupMembers(ctx context.Context, h Host, g int) ([]int, error) {
	out, _, err := h.Run(ctx, fmt.Sprintf("%sg=%d; members", groupMembersFn, g))
	return parsePIDs(out), err
}

// TestAliveReadsTheTableOnlyWithoutItsLeader: a group whose leader has
// exited still lives while a member does (the look then reads the whole
// table), a pid file that names no pid is an error that names it, and the
// answer after a chatty login script's lines reads the same.
func TestAliveReadsTheTableOnlyWithoutItsLeader(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "server.pid")
	kid := filepath.Join(dir, "kid")
	// The leader starts a child in its group, then exits.
	_, err := Start(ctx, NewLocal(), ProcessSpec{Command: fmt.Sprintf(`sleep 300 & echo $! > %s`, kid), LogFile: filepath.Join(dir, "log"), PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(context.Background(), NewLocal(), pidFile, 0) })
	waitFor(t, "the child's pid", func() bool { return len(readPIDs(t, kid)) == 1 })
	pid, _, err := readPID(ctx, NewLocal(), pidFile)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the leader to exit", func() bool { return !pidAlive(pid) })
	if alive, err := Alive(ctx, NewLocal(), pidFile); err != nil || !alive {
		t.Errorf("Alive with the leader gone and its child running = %v, %v; want true", alive, err)
	}
	out, _, err := NewLocal().Run(ctx, aliveCmd(pidFile))
	if err != nil || strings.Contains(string(out), "live") {
		t.Errorf("the look without a leader answered %q, %v; want the members", out, err)
	}
	if err := Stop(ctx, NewLocal(), pidFile, time.Second); err != nil {
		t.Fatal(err)
	}
	if alive, err := Alive(ctx, NewLocal(), pidFile); err != nil || alive {
		t.Errorf("Alive after Stop = %v, %v; want false", alive, err)
	}
	// A stale pid file: the answer names the pid and no member; a login
	// banner's lines before it count for nothing.
	os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n", pid)), 0o644)
	out, _, err = NewLocal().Run(ctx, aliveCmd(pidFile))
	if alive, perr := parseAlive(append([]byte("Welcome!\nlive\n4242\n"), out...), "h", pidFile); err != nil || perr != nil || alive {
		t.Errorf("a stale pid file after a login banner: %q, alive %v, %v %v", out, alive, err, perr)
	}
	bad := filepath.Join(dir, "bad.pid")
	os.WriteFile(bad, []byte("not-a-pid\n"), 0o644)
	if _, err := Alive(ctx, NewLocal(), bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "not a pid") {
		t.Errorf("Alive on %q: %v; want an error naming the file", "not-a-pid", err)
	}
}
