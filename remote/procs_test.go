package remote

import (
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
