package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unameHost answers `uname -s -m` with a fixed platform and runs the rest
// locally.
type unameHost struct {
	*Local
	uname string
}

func (h unameHost) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	if cmd == "uname -s -m" {
		return []byte(h.uname + "\n"), nil, nil
	}
	return h.Local.Run(ctx, cmd)
}

func TestUploadSelf(t *testing.T) {
	ctx := testCtx(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "bakeoff")
	if err := UploadSelf(ctx, NewLocal(), exe, dst); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("uploaded binary: %v, %v", st, err)
	}
	dst2 := filepath.Join(t.TempDir(), "bakeoff")
	err = UploadSelf(ctx, unameHost{NewLocal(), "Linux riscv64"}, exe, dst2)
	var pm *PlatformMismatchError
	if !errors.As(err, &pm) || pm.HostArch != "riscv64" || !strings.Contains(err.Error(), "tunnel") {
		t.Fatalf("UploadSelf to another platform = %v; want *PlatformMismatchError", err)
	}
	if _, err := os.Stat(dst2); !os.IsNotExist(err) {
		t.Error("uploaded despite the mismatch")
	}
}
