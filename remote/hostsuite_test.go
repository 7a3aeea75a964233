package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These checks run against every Host implementation: Local here, and SSH
// through a real sshd on 127.0.0.1 (the host's files are this machine's
// files, so the test can look at them directly).

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func hostSuite(t *testing.T, h Host) {
	t.Run("RunExit", func(t *testing.T) { suiteRunExit(t, h) })
	t.Run("BigOutput", func(t *testing.T) { suiteBigOutput(t, h) })
	t.Run("UploadDownload", func(t *testing.T) { suiteTransfer(t, h) })
	t.Run("Process", func(t *testing.T) { suiteProcess(t, h) })
	t.Run("StopEscalates", func(t *testing.T) { suiteStopEscalates(t, h) })
	t.Run("StopEscaped", func(t *testing.T) { suiteStopEscaped(t, h) })
	t.Run("StopMatching", func(t *testing.T) { suiteStopMatching(t, h) })
	t.Run("LogTail", func(t *testing.T) { suiteLogTail(t, h) })
	t.Run("GPUWait", func(t *testing.T) { suiteGPUWait(t, h) })
	t.Run("Platform", func(t *testing.T) { suitePlatform(t, h) })
	t.Run("Tunnel", func(t *testing.T) { suiteTunnel(t, h) })
}

func suiteRunExit(t *testing.T, h Host) {
	ctx := testCtx(t)
	tests := []struct {
		name       string
		cmd        string
		out, err   string
		status     int
		signal     string
		wantExitEr bool
	}{
		{"ok", "echo hi; echo there >&2", "hi\n", "there\n", 0, "", false},
		{"status", "echo partial; echo boom >&2; exit 3", "partial\n", "boom\n", 3, "", true},
		{"signal", "kill -s KILL $$", "", "", -1, "SIGKILL", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := h.Run(ctx, tt.cmd)
			if string(out) != tt.out || string(errOut) != tt.err {
				t.Errorf("Run(%q) = %q, %q; want %q, %q", tt.cmd, out, errOut, tt.out, tt.err)
			}
			var ee *ExitError
			if errors.As(err, &ee) != tt.wantExitEr {
				t.Fatalf("Run(%q) error = %v; want ExitError: %v", tt.cmd, err, tt.wantExitEr)
			}
			if ee == nil {
				return
			}
			if ee.Status != tt.status || ee.Signal != tt.signal || ee.Host != h.Name() || string(ee.Stderr) != tt.err {
				t.Errorf("ExitError = %+v; want status %d signal %q host %q", ee, tt.status, tt.signal, h.Name())
			}
			if !strings.Contains(ee.Error(), h.Name()) {
				t.Errorf("error %q does not name the host", ee)
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		pidFile := filepath.Join(t.TempDir(), "pid")
		done := make(chan error, 1)
		go func() {
			_, _, err := h.Run(ctx, "sh -c 'echo $$ > "+pidFile+"; exec sleep 300'; echo not reached")
			done <- err
		}()
		var pid int
		waitFor(t, "the command to start", func() bool { p := readPIDs(t, pidFile); pid = append(p, 0)[0]; return pid > 0 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Run error = %v; want context.Canceled", err)
		}
		// The command itself goes, not only the wait for it.
		waitFor(t, "the cancelled command to die", func() bool { return !pidAlive(pid) })
	})
}

func suiteBigOutput(t *testing.T, h Host) {
	ctx := testCtx(t)
	// 4 MiB on each stream at once: a reader that drains one stream before
	// the other deadlocks here.
	out, errOut, err := h.Run(ctx, "head -c 4194304 /dev/zero | tr '\\000' a & head -c 4194304 /dev/zero | tr '\\000' b >&2; wait")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4<<20 || len(errOut) != 4<<20 || out[len(out)-1] != 'a' || errOut[0] != 'b' {
		t.Fatalf("got %d bytes stdout, %d stderr; want 4 MiB each", len(out), len(errOut))
	}
}

func suiteTransfer(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.bin")
	data := bytes.Repeat([]byte("bakeoff transfer "), 200000) // ~3.4 MB
	if err := os.WriteFile(src, data, 0o750); err != nil {
		t.Fatal(err)
	}
	up := filepath.Join(dir, "sub", "up.bin")
	if err := EnsureDir(ctx, h, filepath.Dir(up)); err != nil {
		t.Fatal(err)
	}
	if err := h.Upload(ctx, src, up); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(up)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("uploaded file differs (err %v, %d bytes)", err, len(got))
	}
	if st, _ := os.Stat(up); st.Mode().Perm() != 0o750 {
		t.Errorf("uploaded mode %v; want 0750", st.Mode().Perm())
	}
	down := filepath.Join(dir, "down.bin")
	if err := h.Download(ctx, up, down); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(down); !bytes.Equal(got, data) {
		t.Fatal("downloaded file differs")
	}
	if err := h.Download(ctx, filepath.Join(dir, "missing"), down); err == nil || !strings.Contains(err.Error(), h.Name()) {
		t.Errorf("download of a missing file: %v; want an error naming the host", err)
	}
}

// waitFor polls cond until it holds or the test's context ends.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	s = s[strings.LastIndex(s, ")")+2:]
	return s[0] != 'Z' && s[0] != 'X'
}

func readPIDs(t *testing.T, path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parsePIDs(b)
}

func suiteProcess(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile, logFile := filepath.Join(dir, "run", "server.pid"), filepath.Join(dir, "logs", "server.log")
	kids := filepath.Join(dir, "kids")
	// A server with a child and a grandchild, each writing its pid.
	cmd := fmt.Sprintf(`echo "start $GREETING in $(pwd)"; sh -c 'sleep 300 & echo $! >> %[1]s; wait' & echo $! >> %[1]s; sleep 300`, kids)
	pid, err := Start(ctx, h, ProcessSpec{Command: cmd, Env: map[string]string{"GREETING": "hello world"}, Dir: dir, LogFile: logFile, PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(context.Background(), h, pidFile, 0) })
	if b, _ := os.ReadFile(pidFile); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("pid file holds %q; Start returned %d", b, pid)
	}
	waitFor(t, "two descendants", func() bool { return len(readPIDs(t, kids)) == 2 })
	waitFor(t, "the log line", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "start hello world in "+dir)
	})
	if alive, err := Alive(ctx, h, pidFile); err != nil || !alive {
		t.Fatalf("Alive = %v, %v; want true", alive, err)
	}
	all := append([]int{pid}, readPIDs(t, kids)...)
	if err := Stop(ctx, h, pidFile, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if pidAlive(p) {
			t.Errorf("pid %d survived Stop", p)
		}
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	// Idempotent: the pid file is gone, and a stale one names a dead group.
	if err := Stop(ctx, h, pidFile, time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if alive, err := Alive(ctx, h, pidFile); err != nil || alive {
		t.Errorf("Alive after Stop = %v, %v; want false", alive, err)
	}
	os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644)
	if alive, err := Alive(ctx, h, pidFile); err != nil || alive {
		t.Errorf("Alive on a stale pid file = %v, %v; want false", alive, err)
	}
	if err := Stop(ctx, h, pidFile, time.Second); err != nil {
		t.Errorf("Stop on a stale pid file: %v", err)
	}
	// A pid file naming a plain process, not a group leader, still stops it.
	plain := filepath.Join(dir, "plain.pid")
	if _, _, err := h.Run(ctx, fmt.Sprintf("sh -c 'sleep 300 & echo $! > %s' </dev/null >/dev/null 2>&1", plain)); err != nil {
		t.Fatal(err)
	}
	ppid := readPIDs(t, plain)
	if len(ppid) != 1 || !pidAlive(ppid[0]) {
		t.Fatalf("plain process: %v", ppid)
	}
	if alive, err := Alive(ctx, h, plain); err != nil || !alive {
		t.Errorf("Alive(plain process) = %v, %v", alive, err)
	}
	if err := Stop(ctx, h, plain, time.Second); err != nil || pidAlive(ppid[0]) {
		t.Errorf("Stop(plain process) = %v; alive %v", err, pidAlive(ppid[0]))
	}
	// A missing directory fails the start.
	if _, err := Start(ctx, h, ProcessSpec{Command: "exit 0", Dir: filepath.Join(dir, "nope"), LogFile: logFile, PIDFile: pidFile}); err == nil {
		t.Error("Start in a missing directory succeeded")
	}
}

// suiteStopEscaped: a child that left the server's group and session (as a
// scheduler that calls setsid would) is stopped with the server, and a
// process outside the server's tree is left alone.
func suiteStopEscaped(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile, logFile := filepath.Join(dir, "server.pid"), filepath.Join(dir, "server.log")
	escaped, bystander := filepath.Join(dir, "escaped"), filepath.Join(dir, "bystander")
	if _, _, err := h.Run(ctx, fmt.Sprintf("setsid sh -c 'echo $$ > %s; exec sleep 300' </dev/null >/dev/null 2>&1 &", bystander)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bystander", func() bool { return len(readPIDs(t, bystander)) == 1 })
	by := readPIDs(t, bystander)[0]
	t.Cleanup(func() { syscall.Kill(by, syscall.SIGKILL) })
	cmd := fmt.Sprintf(`setsid sh -c 'echo $$ > %s; exec sleep 300' & sleep 300`, escaped)
	if _, err := Start(ctx, h, ProcessSpec{Command: cmd, Dir: dir, LogFile: logFile, PIDFile: pidFile}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the escaped child", func() bool { return len(readPIDs(t, escaped)) == 1 })
	esc := readPIDs(t, escaped)[0]
	t.Cleanup(func() { syscall.Kill(esc, syscall.SIGKILL) })
	if err := Stop(ctx, h, pidFile, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if pidAlive(esc) {
		t.Errorf("the child that left the group (pid %d) survived Stop", esc)
	}
	if !pidAlive(by) {
		t.Errorf("Stop killed pid %d, which the server never started", by)
	}
}

func suiteStopEscalates(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile, logFile, ready := filepath.Join(dir, "p.pid"), filepath.Join(dir, "p.log"), filepath.Join(dir, "ready")
	// Ignores SIGTERM, and so does its child.
	cmd := fmt.Sprintf(`trap '' TERM; sh -c 'trap "" TERM; while :; do sleep 1; done' & touch %s; while :; do sleep 1; done`, ready)
	pid, err := Start(ctx, h, ProcessSpec{Command: cmd, LogFile: logFile, PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the traps", func() bool { _, err := os.Stat(ready); return err == nil })
	start := time.Now()
	if err := Stop(ctx, h, pidFile, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("Stop returned before the grace period although TERM is ignored")
	}
	if pidAlive(pid) {
		t.Errorf("pid %d survived SIGKILL", pid)
	}
	if alive, _ := Alive(ctx, h, pidFile); alive {
		t.Error("group still alive")
	}
}

func suiteStopMatching(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	marker := fmt.Sprintf("bakeoff-stray-%d-%d", os.Getpid(), time.Now().UnixNano())
	var pids []int
	for i := range 2 {
		pf := filepath.Join(dir, fmt.Sprintf("%d.pid", i))
		pid, err := Start(ctx, h, ProcessSpec{Command: "exec sh -c 'sleep 300; true' " + marker, LogFile: filepath.Join(dir, "log"), PIDFile: pf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Stop(context.Background(), h, pf, 0) })
		pids = append(pids, pid)
	}
	// The marker is the inner shell's $0, so it is in its command line.
	waitFor(t, "strays", func() bool { return pidAlive(pids[0]) && pidAlive(pids[1]) })
	got, err := StopMatching(ctx, h, marker, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if pidAlive(p) {
			t.Errorf("pid %d survived StopMatching", p)
		}
	}
	if len(got) < 2 {
		t.Errorf("StopMatching returned %v; want at least %v", got, pids)
	}
	got, err = StopMatching(ctx, h, marker, time.Second)
	if err != nil || len(got) != 0 {
		t.Errorf("second StopMatching = %v, %v; want nothing", got, err)
	}
	if _, err := StopMatching(ctx, h, "ab", time.Second); err == nil {
		t.Error("a two-byte pattern was accepted")
	}
}

func suiteLogTail(t *testing.T, h Host) {
	ctx := testCtx(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	data, next, err := ReadFrom(ctx, h, log, 0, 0)
	if err != nil || len(data) != 0 || next != 0 {
		t.Fatalf("ReadFrom(missing) = %q, %d, %v; want empty", data, next, err)
	}
	long := strings.Repeat("x", 100<<10) // a line over 64 KiB
	content := "line one\n" + long + "\nline three\n"
	os.WriteFile(log, []byte(content), 0o644)
	var got []byte
	var off int64
	for {
		data, n, err := ReadFrom(ctx, h, log, off, 32<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 32<<10 {
			t.Fatalf("ReadFrom returned %d bytes; max 32 KiB", len(data))
		}
		if n == off {
			break
		}
		got, off = append(got, data...), n
	}
	if string(got) != content || off != int64(len(content)) {
		t.Fatalf("read %d bytes up to %d; want %d", len(got), off, len(content))
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("Traceback (most recent call last)\n")
	f.Close()
	data, next, err = ReadFrom(ctx, h, log, off, 0)
	if err != nil || string(data) != "Traceback (most recent call last)\n" || next != off+int64(len(data)) {
		t.Fatalf("ReadFrom after append = %q, %d, %v", data, next, err)
	}
	last, err := LastLines(ctx, h, log, 2)
	if err != nil || last != "line three\nTraceback (most recent call last)" {
		t.Errorf("LastLines = %q, %v", last, err)
	}
	if last, err := LastLines(ctx, h, filepath.Join(dir, "missing"), 5); err != nil || last != "" {
		t.Errorf("LastLines(missing) = %q, %v", last, err)
	}
}

// fakeNvidiaSMI writes a script that answers the queries remote sends: one
// GPU whose memory is held by every live pid listed in the holders file.
func fakeNvidiaSMI(t *testing.T, dir string) (script, holders string) {
	holders = filepath.Join(dir, "holders")
	script = filepath.Join(dir, "nvidia-smi")
	body := fmt.Sprintf(`#!/bin/sh
live=
for p in $(cat %s 2>/dev/null); do
  s=; read -r s 2>/dev/null < /proc/$p/stat || continue
  s=${s##*) }
  case "$s" in Z*|X*) ;; *) live="$live $p" ;; esac
done
case "$1" in
--query-gpu=index,name,memory.used,memory.total*)
  used=3; [ -n "$live" ] && used=21099
  echo "0, NVIDIA H200, $used, 143771"; echo "1, NVIDIA H200, [N/A], 143771" ;;
--query-compute-apps=*)
  for p in $live; do echo "$p, python3, 21090"; done ;;
--query-gpu=driver_version,name*)
  echo "550.54.15, NVIDIA H200"; echo "550.54.15, NVIDIA H200" ;;
*) echo "fake nvidia-smi: unexpected $*" >&2; exit 2 ;;
esac
`, holders)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, holders
}

func suiteGPUWait(t *testing.T, h Host) { suiteGPUWaitWith(t, h, "") }

// suiteGPUWaitWith runs the GPU wait against the fake nvidia-smi; with
// onPath set, that directory is already on the host's PATH and the wait
// runs plain `nvidia-smi`.
func suiteGPUWaitWith(t *testing.T, h Host, onPath string) {
	ctx := testCtx(t)
	dir := onPath
	if dir == "" {
		dir = t.TempDir()
	}
	script, holders := fakeNvidiaSMI(t, dir)
	smiCmd := script
	if onPath != "" {
		smiCmd = ""
	}
	driver, names, err := GPUFacts(ctx, h, smiCmd)
	if err != nil || driver != "550.54.15" || len(names) != 2 || names[1] != "NVIDIA H200" {
		t.Fatalf("GPUFacts = %q, %q, %v", driver, names, err)
	}
	polls := 0
	w := GPUWait{NvidiaSMI: smiCmd, MaxUsedMiB: 100, Timeout: 5 * time.Second, Interval: 20 * time.Millisecond, OnPoll: func([]GPU, []GPUProcess) { polls++ }}
	if err := WaitGPUFree(ctx, h, w); err != nil || polls != 1 {
		t.Fatalf("WaitGPUFree on free GPUs = %v after %d polls", err, polls)
	}
	pidFile := filepath.Join(dir, "holder.pid")
	pid, err := Start(ctx, h, ProcessSpec{Command: "exec sleep 300", LogFile: filepath.Join(dir, "holder.log"), PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(context.Background(), h, pidFile, 0) })
	os.WriteFile(holders, []byte(strconv.Itoa(pid)), 0o644)

	w.Timeout = 200 * time.Millisecond
	err = WaitGPUFree(ctx, h, w)
	var busy *GPUBusyError
	if !errors.As(err, &busy) {
		t.Fatalf("WaitGPUFree with a holder = %v; want *GPUBusyError", err)
	}
	if len(busy.Processes) != 1 || busy.Processes[0].PID != pid || busy.Host != h.Name() {
		t.Errorf("GPUBusyError = %+v; want pid %d", busy, pid)
	}
	for _, want := range []string{fmt.Sprintf("pid %d (python3", pid), "GPU 0 uses 21099 MiB", h.Name()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !pidAlive(pid) {
		t.Fatal("the wait killed a holder without KillStrays")
	}

	w.KillStrays = true
	if err := WaitGPUFree(ctx, h, w); err != nil {
		t.Fatalf("WaitGPUFree with KillStrays = %v", err)
	}
	if pidAlive(pid) {
		t.Error("the stray holder is still alive")
	}
}

func suitePlatform(t *testing.T, h Host) {
	goos, goarch, err := Platform(testCtx(t), h)
	if err != nil || goos != "linux" || goarch == "" {
		t.Fatalf("Platform = %q, %q, %v", goos, goarch, err)
	}
}

// noPSHost runs every command with a `ps` that fails, as on a host where ps
// is missing or lacks -e/-o, so the /proc fallbacks are exercised.
type noPSHost struct{ Host }

func (h noPSHost) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	return h.Host.Run(ctx, "ps() { return 127; }\n"+cmd)
}

func TestStopMatchingWithoutPS(t *testing.T) { suiteStopMatching(t, noPSHost{NewLocal()}) }
