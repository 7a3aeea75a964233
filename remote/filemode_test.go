package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCreatedUserOnly: the directories EnsureDir and Start create on the
// host, and the pid and log files Start writes, are user-only, since they
// name hosts and paths; a directory that exists keeps its mode; and the
// started process gets the host's own umask back, so that what it writes is
// as it would be without bakeoff.
func TestCreatedUserOnly(t *testing.T) {
	ctx := testCtx(t)
	h := NewLocal()
	out, _, err := h.Run(ctx, "umask")
	if err != nil {
		t.Fatal(err)
	}
	hostUmask := strings.TrimSpace(string(out))
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o755); err != nil { // whatever this process's umask
		t.Fatal(err)
	}
	work := filepath.Join(root, "work", "sub")
	if err := EnsureDir(ctx, h, work); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(ctx, h, shared); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(root, "run", "server.pid")
	logFile := filepath.Join(root, "logs", "server.log")
	umaskFile := filepath.Join(root, "umask")
	if _, err := Start(ctx, h, ProcessSpec{Command: "umask > " + Quote(umaskFile) + "; exec sleep 300",
		LogFile: logFile, PIDFile: pidFile}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := Stop(ctx, h, pidFile, time.Second); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(root, "work"), os.ModeDir | 0o700},
		{work, os.ModeDir | 0o700},
		{shared, os.ModeDir | 0o755},
		{filepath.Dir(pidFile), os.ModeDir | 0o700},
		{pidFile, 0o600},
		{filepath.Dir(logFile), os.ModeDir | 0o700},
		{logFile, 0o600},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != tc.want {
			t.Errorf("%s: mode %v, want %v", tc.path, got, tc.want)
		}
	}
	var got string
	for deadline := time.Now().Add(time.Minute); got == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(umaskFile)
		got = strings.TrimSpace(string(data))
	}
	if got != hostUmask {
		t.Errorf("the started process runs under umask %q, want the host's %q", got, hostUmask)
	}
}
