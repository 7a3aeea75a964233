package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pkg/sftp"
)

// sftpClient returns the link's sftp session, opened on first use.
func (s *SSH) sftpClient(ctx context.Context) (*link, *sftp.Client, error) {
	l, err := s.link(ctx)
	if err != nil {
		return nil, nil, err
	}
	l.sftpOnce.Do(func() {
		// Concurrent writes keep a long link busy; without them an upload
		// of the bakeoff binary crawls at one packet per round trip.
		l.sftp, l.sftpErr = sftp.NewClient(l.client, sftp.UseConcurrentWrites(true))
	})
	if l.sftpErr != nil {
		return l, nil, s.failed(l, "starting sftp", l.sftpErr)
	}
	return l, l.sftp, nil
}

// sftpPath makes a "~/" path relative, which sftp resolves from the login
// directory.
func sftpPath(p string) string {
	switch {
	case p == "~":
		return "."
	case strings.HasPrefix(p, "~/"):
		return p[2:]
	}
	return p
}

// Upload copies a local file to the host through a temporary file beside
// the destination, keeps its mode, checks its SHA-256 on the host and only
// then renames it into place, so a half-written binary is never run.
func (s *SSH) Upload(ctx context.Context, local, remote string) error {
	if err := s.upload(ctx, local, remote); err != nil {
		return fmt.Errorf("%s: uploading %s to %s: %w", s.Name(), local, remote, err)
	}
	return nil
}

func (s *SSH) upload(ctx context.Context, local, remote string) error {
	l, c, err := s.sftpClient(ctx)
	if err != nil {
		return err
	}
	in, err := os.Open(local)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	dst := sftpPath(remote)
	tmp := path.Join(path.Dir(dst), "."+path.Base(dst)+".part-"+randHex())
	out, err := c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return s.linkErr(l, err)
	}
	defer c.Remove(tmp)
	h := sha256.New()
	stop := context.AfterFunc(ctx, func() { out.Close() })
	_, err = out.ReadFrom(io.TeeReader(in, h))
	stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		out.Close()
		return s.linkErr(l, err)
	}
	if err := out.Chmod(st.Mode().Perm()); err != nil {
		out.Close()
		return s.linkErr(l, err)
	}
	if err := out.Close(); err != nil {
		return s.linkErr(l, err)
	}
	want := hex.EncodeToString(h.Sum(nil))
	got, err := s.remoteSHA256(ctx, c, tmp)
	if err != nil {
		return fmt.Errorf("checking the upload: %w", err)
	}
	if got != want {
		return fmt.Errorf("checksum mismatch: sent %s, the host has %s", want, got)
	}
	if err := c.PosixRename(tmp, dst); err != nil {
		if err := c.Rename(tmp, dst); err != nil {
			return s.linkErr(l, err)
		}
	}
	return nil
}

// remoteSHA256 hashes a host file with sha256sum, or by reading it back
// where that is missing.
func (s *SSH) remoteSHA256(ctx context.Context, c *sftp.Client, p string) (string, error) {
	q := Quote(p)
	if !path.IsAbs(p) {
		q = `"$HOME"/` + Quote(p)
	}
	out, _, err := s.Run(ctx, "command -v sha256sum >/dev/null 2>&1 && sha256sum -b "+q)
	if f := strings.Fields(string(out)); err == nil && len(f) > 0 && len(f[0]) == 64 {
		return f[0], nil
	}
	var ee *ExitError
	if err != nil && !errors.As(err, &ee) {
		return "", err
	}
	r, err := c.Open(p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := r.WriteTo(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Download copies a host file to a local path (through a temporary file
// beside it), keeping its mode.
func (s *SSH) Download(ctx context.Context, remote, local string) error {
	if err := s.download(ctx, remote, local); err != nil {
		return fmt.Errorf("%s: downloading %s to %s: %w", s.Name(), remote, local, err)
	}
	return nil
}

func (s *SSH) download(ctx context.Context, remote, local string) error {
	l, c, err := s.sftpClient(ctx)
	if err != nil {
		return err
	}
	in, err := c.Open(sftpPath(remote))
	if err != nil {
		return s.linkErr(l, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return s.linkErr(l, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), "."+filepath.Base(local)+".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	stop := context.AfterFunc(ctx, func() { in.Close() })
	n, err := in.WriteTo(tmp)
	stop()
	if ctx.Err() != nil {
		tmp.Close()
		return ctx.Err()
	}
	if err != nil {
		tmp.Close()
		return s.linkErr(l, err)
	}
	if n != st.Size() {
		tmp.Close()
		return fmt.Errorf("got %d bytes of %d", n, st.Size())
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), local)
}

// Open streams a host file from offset through sftp, which leaves no
// process behind on the host. A missing file is an error wrapping
// fs.ErrNotExist.
func (s *SSH) Open(ctx context.Context, p string, offset int64) (io.ReadCloser, error) {
	l, c, err := s.sftpClient(ctx)
	if err != nil {
		return nil, err
	}
	f, err := c.Open(sftpPath(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: opening %s: %w", s.Name(), p, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: opening %s: %w", s.Name(), p, s.linkErr(l, err))
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: seeking %s to %d: %w", s.Name(), p, offset, err)
	}
	return f, nil
}

// linkErr marks err as a disconnection when the link is gone; an sftp
// status (no such file, permission denied) is returned as it is.
func (s *SSH) linkErr(l *link, err error) error {
	var se *sftp.StatusError
	if errors.As(err, &se) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	if l.isDead() {
		return fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	return err
}

func randHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
