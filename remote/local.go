package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultLocalWaitDelay is how long Local.Run waits, once the command has
// exited or been cancelled, for whatever still holds its output pipes (a
// background child that did not redirect its output) before giving up on them.
const DefaultLocalWaitDelay = 2 * time.Second

// Local is this machine as a Host: commands run under `sh -c`, files are
// copied on the local file system, and Dial uses a net.Dialer.
type Local struct {
	dialer net.Dialer
}

var _ Host = (*Local)(nil)

// NewLocal returns this machine as a Host.
func NewLocal() *Local { return &Local{} }

// Name returns "local".
func (l *Local) Name() string { return "local" }

// Run executes cmd with `sh -c` in its own process group, which is killed
// as a whole when ctx is cancelled.
func (l *Local) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		// The whole group: a shell killed alone leaves its children running.
		return unix.Kill(-c.Process.Pid, unix.SIGKILL)
	}
	c.WaitDelay = DefaultLocalWaitDelay
	err := c.Run()
	if err == nil {
		return stdout.Bytes(), stderr.Bytes(), nil
	}
	if ctx.Err() != nil {
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("local: running %q: %w", shorten(cmd, 200), ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		x := &ExitError{Host: l.Name(), Cmd: cmd, Status: ee.ExitCode(), Stderr: stderr.Bytes()}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			x.Status, x.Signal = -1, unix.SignalName(ws.Signal())
		}
		return stdout.Bytes(), stderr.Bytes(), x
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command finished; something it left behind kept the pipes open.
		return stdout.Bytes(), stderr.Bytes(), nil
	}
	return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("local: running %q: %w", shorten(cmd, 200), err)
}

// Upload copies a local file to another local path, keeping its mode, and
// checks that the copy has the same SHA-256 as the source.
func (l *Local) Upload(ctx context.Context, local, remote string) error {
	if err := copyLocal(ctx, local, localPath(remote)); err != nil {
		return fmt.Errorf("local: uploading %s to %s: %w", local, remote, err)
	}
	return nil
}

// Download copies a local path to another local path, keeping its mode.
func (l *Local) Download(ctx context.Context, remote, local string) error {
	if err := copyLocal(ctx, localPath(remote), local); err != nil {
		return fmt.Errorf("local: downloading %s to %s: %w", remote, local, err)
	}
	return nil
}

// Open opens path and seeks to offset.
func (l *Local) Open(ctx context.Context, path string, offset int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(localPath(path))
	if err != nil {
		return nil, fmt.Errorf("local: opening %s: %w", path, err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("local: seeking %s to %d: %w", path, offset, err)
	}
	return f, nil
}

// Dial connects to addr from this machine.
func (l *Local) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := l.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("local: dialing %s: %w", addr, err)
	}
	return c, nil
}

// localPath expands a leading "~/" as the shell does for Run, so that a
// workdir like "~/bakeoff" names the same place for every method.
func localPath(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}

// Close does nothing: there is no connection to release.
func (l *Local) Close() error { return nil }

// copyLocal copies src to dst through a temporary file beside dst, so that a
// reader never sees half a file, and verifies the checksum of the result.
func copyLocal(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), &ctxReader{ctx: ctx, r: in}); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	got, err := fileSHA256(tmp.Name())
	if err != nil {
		return err
	}
	if !bytes.Equal(got, h.Sum(nil)) {
		return fmt.Errorf("checksum mismatch: wrote %x, read back %x", h.Sum(nil), got)
	}
	return os.Rename(tmp.Name(), dst)
}

// fileSHA256 returns the SHA-256 of a local file.
func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// ctxReader stops a copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
