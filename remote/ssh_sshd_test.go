package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
)

// dialTestSSHD connects to a real sshd through its ssh config alias, as a
// user's `ssh ALIAS` would, with no agent.
func dialTestSSHD(t *testing.T, s *sshdtest.Server) *SSH {
	t.Helper()
	h, err := DialSSH(testCtx(t), SSHOptions{Target: s.Alias, ConfigFile: s.ConfigFile, Getenv: s.Getenv, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("DialSSH: %v\nsshd: %s", err, s.Stderr())
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestSSHRealSSHD(t *testing.T) {
	smiDir := t.TempDir()
	s := sshdtest.StartWith(t, sshdtest.Options{Path: smiDir + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"})
	h := dialTestSSHD(t, s)
	if h.Name() != s.Alias {
		t.Errorf("Name = %q", h.Name())
	}
	hostSuite(t, h)
	t.Run("GPUWaitOnPath", func(t *testing.T) { suiteGPUWaitWith(t, h, smiDir) })
	t.Run("ManyCommandsAtOnce", func(t *testing.T) {
		// More than sshd's MaxSessions (10) on one connection.
		ctx := testCtx(t)
		const n = 24
		errs := make(chan error, n)
		for i := range n {
			go func() {
				out, _, err := h.Run(ctx, fmt.Sprintf("sleep 0.2; echo %d", i))
				if err == nil && string(out) != fmt.Sprintf("%d\n", i) {
					err = fmt.Errorf("command %d printed %q", i, out)
				}
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("HomeRelativePaths", func(t *testing.T) {
		ctx := testCtx(t)
		home, _, err := h.Run(ctx, "printf %s \"$HOME\"")
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("bakeoff-test-%d", time.Now().UnixNano())
		t.Cleanup(func() { os.RemoveAll(filepath.Join(string(home), name)) })
		if err := EnsureDir(ctx, h, "~/"+name+"/sub"); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(t.TempDir(), "f")
		os.WriteFile(src, []byte("hello\n"), 0o644)
		if err := h.Upload(ctx, src, "~/"+name+"/sub/f"); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(string(home), name, "sub", "f")); err != nil || string(b) != "hello\n" {
			t.Fatalf("uploaded to ~: %q, %v", b, err)
		}
	})
}

// TestSSHDetachedSurvivesDisconnect starts a server over SSH, loses the
// link (the client closes, then sshd itself is killed), and finds the
// server still running from a new connection, which then stops it.
func TestSSHDetachedSurvivesDisconnect(t *testing.T) {
	s := sshdtest.Start(t)
	h := dialTestSSHD(t, s)
	ctx := testCtx(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "server.pid")
	logFile := filepath.Join(dir, "server.log")
	pid, err := Start(ctx, h, ProcessSpec{Command: "while :; do echo tick; sleep 0.2; done", LogFile: logFile, PIDFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(context.Background(), NewLocal(), pidFile, 0) })
	h.Close()
	s.Kill()
	if !pidAlive(pid) {
		t.Fatal("the detached process died with the SSH connection")
	}
	if _, _, err := h.Run(ctx, "true"); err == nil {
		t.Error("Run on a closed SSH host succeeded")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	h2 := dialTestSSHD(t, s)
	size := func() int64 { st, _ := os.Stat(logFile); return st.Size() }
	before := size()
	waitFor(t, "the log to grow after the disconnect", func() bool { return size() > before })
	if alive, err := Alive(ctx, h2, pidFile); err != nil || !alive {
		t.Fatalf("Alive after reconnect = %v, %v", alive, err)
	}
	if err := Stop(ctx, h2, pidFile, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if pidAlive(pid) {
		t.Fatal("still running after Stop")
	}
}

// TestSSHReconnectAfterSSHDRestart kills sshd under a live client: the
// call in flight fails with ErrDisconnected, and the next call reconnects
// once sshd is back.
func TestSSHReconnectAfterSSHDRestart(t *testing.T) {
	s := sshdtest.Start(t)
	h, err := DialSSH(testCtx(t), SSHOptions{Target: s.Alias, ConfigFile: s.ConfigFile, Getenv: s.Getenv,
		ConnectTimeout: 5 * time.Second, ReconnectBackoff: 50 * time.Millisecond, ReconnectAttempts: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := testCtx(t)
	started := filepath.Join(t.TempDir(), "started")
	errc := make(chan error, 1)
	go func() { _, _, err := h.Run(ctx, "touch "+Quote(started)+"; sleep 60"); errc <- err }()
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	s.Kill()
	err = <-errc
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("in-flight Run error = %v; want ErrDisconnected", err)
	}
	if !strings.Contains(err.Error(), s.Alias) {
		t.Errorf("error %q does not name the host", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	out, _, err := h.Run(ctx, "echo back")
	if err != nil || string(out) != "back\n" {
		t.Fatalf("Run after sshd restart = %q, %v", out, err)
	}
}

// TestSSHDefaultsFromHome dials the alias with nothing but a HOME that
// holds .ssh/config and .ssh/known_hosts, as a CLI run with the server's
// Env would.
func TestSSHDefaultsFromHome(t *testing.T) {
	s := sshdtest.Start(t)
	h, err := DialSSH(testCtx(t), SSHOptions{Target: s.Alias, Getenv: s.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	out, _, err := h.Run(testCtx(t), "id -un")
	if err != nil || strings.TrimSpace(string(out)) != s.User {
		t.Fatalf("Run(id -un) = %q, %v; want %s", out, err, s.User)
	}
}
