// Package remote is everything the orchestrator needs from a host: commands,
// files, detached server processes, log tails, GPU memory and host-local
// ports, over SSH or on this machine.
package remote

import (
	"context"
	"io"
	"net"
)

// Host is a machine servers run on. Implementations: SSH and Local.
// Every method takes a context and returns errors that name the host.
type Host interface {
	// Name identifies the host in messages ("local", "gpu-box", "user@h:22").
	Name() string
	// Run executes a shell command line and returns its captured output.
	// A non-zero exit is an *ExitError carrying the status and stderr.
	Run(ctx context.Context, cmd string) (stdout, stderr []byte, err error)
	// Upload copies a local file to a host path (mode preserved), verifying
	// its checksum; Download copies a host path to a local file.
	Upload(ctx context.Context, local, remote string) error
	Download(ctx context.Context, remote, local string) error
	// Open streams a host file, ReadAt-style from offset; used for log tails.
	Open(ctx context.Context, path string, offset int64) (io.ReadCloser, error)
	// Dial connects to addr (e.g. "127.0.0.1:30000") as seen from the host.
	Dial(ctx context.Context, network, addr string) (net.Conn, error)
	// Close releases the connection; safe to call twice.
	Close() error
}
