package remote

import (
	"context"
	"fmt"
	"runtime"
)

// PlatformMismatchError says that a binary built for this machine cannot
// run on the host, so the load must be driven from here (tunnel mode).
type PlatformMismatchError struct {
	Host             string
	HostOS, HostArch string // GOOS/GOARCH names of the host
	OS, Arch         string // of the binary
}

func (e *PlatformMismatchError) Error() string {
	return fmt.Sprintf("%s: the host is %s/%s and this binary is %s/%s: it cannot run there (use the tunnel sweep mode, or a %s/%s build)",
		e.Host, e.HostOS, e.HostArch, e.OS, e.Arch, e.HostOS, e.HostArch)
}

// UploadSelf uploads exe (this program, normally os.Executable()) to dst on
// h and makes it executable, after checking that h runs the same OS and
// architecture as this binary; otherwise it returns a
// *PlatformMismatchError and uploads nothing.
func UploadSelf(ctx context.Context, h Host, exe, dst string) error {
	goos, goarch, err := Platform(ctx, h)
	if err != nil {
		return err
	}
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return &PlatformMismatchError{Host: h.Name(), HostOS: goos, HostArch: goarch, OS: runtime.GOOS, Arch: runtime.GOARCH}
	}
	if err := h.Upload(ctx, exe, dst); err != nil {
		return err
	}
	if _, _, err := h.Run(ctx, "chmod 755 "+QuotePath(dst)); err != nil {
		return fmt.Errorf("%s: making %s executable: %w", h.Name(), dst, err)
	}
	return nil
}
