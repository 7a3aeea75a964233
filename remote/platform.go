package remote

import (
	"context"
	"fmt"
	"strings"
)

// unameOS maps `uname -s` to GOOS, and unameArch `uname -m` to GOARCH.
var (
	unameOS = map[string]string{
		"Linux": "linux", "Darwin": "darwin", "FreeBSD": "freebsd",
		"OpenBSD": "openbsd", "NetBSD": "netbsd",
	}
	unameArch = map[string]string{
		"x86_64": "amd64", "amd64": "amd64",
		"aarch64": "arm64", "arm64": "arm64",
		"i386": "386", "i686": "386",
		"armv7l": "arm", "armv6l": "arm",
		"ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64",
	}
)

// Platform returns h's operating system and architecture as Go names
// (GOOS, GOARCH), from `uname -s -m`, so a caller can tell whether its own
// binary runs there.
func Platform(ctx context.Context, h Host) (goos, goarch string, err error) {
	out, _, err := h.Run(ctx, unameCmd)
	if err != nil {
		return "", "", fmt.Errorf("%s: reading the platform: %w", h.Name(), err)
	}
	goos, goarch, err = ParseUname(string(out))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", h.Name(), err)
	}
	return goos, goarch, nil
}

// ParseUname maps the output of `uname -s -m` to GOOS and GOARCH.
func ParseUname(out string) (goos, goarch string, err error) {
	f := strings.Fields(out)
	if len(f) != 2 {
		return "", "", fmt.Errorf("unexpected `uname -s -m` output %q", shorten(out, 80))
	}
	goos, ok1 := unameOS[f[0]]
	goarch, ok2 := unameArch[f[1]]
	if !ok1 || !ok2 {
		return "", "", fmt.Errorf("unknown platform %s/%s", f[0], f[1])
	}
	return goos, goarch, nil
}

const unameCmd = "uname -s -m"
