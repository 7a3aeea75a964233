package orchestrator

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/bakeoff-dev/bakeoff/remote"
)

// dryHost is the host --dry-run runs the lifecycle against: it records every
// command the real steps would send and answers as an idle host would (no pid
// files, one GPU with no memory in use, empty logs). Because the real steps build the
// commands, what --dry-run shows is exactly what a run executes.
type dryHost struct {
	name   string
	record func(phase, cmd string)
}

var _ remote.Host = (*dryHost)(nil)

// errDry answers what a dry host cannot pretend: network connections.
var errDry = errors.New("dry run: nothing is contacted")

func newDryHost(real remote.Host, record func(phase, cmd string)) *dryHost {
	name := "dry-run"
	if real != nil {
		name = real.Name()
	}
	return &dryHost{name: name, record: record}
}

func (d *dryHost) Name() string { return d.name }

func (d *dryHost) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	d.record("", strings.TrimRight(cmd, "\n"))
	if strings.Contains(cmd, "--query-gpu=index,") {
		// An idle GPU: the wait treats an empty answer as a broken driver.
		return []byte("0, dry-run GPU, 0, 0\n"), nil, nil
	}
	return nil, nil, nil
}

func (d *dryHost) Upload(_ context.Context, local, remote string) error {
	d.record("", "upload "+local+" → "+remote)
	return nil
}

func (d *dryHost) Download(_ context.Context, remote, local string) error {
	d.record("", "download "+remote+" → "+local)
	return nil
}

func (d *dryHost) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}

func (d *dryHost) Dial(context.Context, string, string) (net.Conn, error) { return nil, errDry }

func (d *dryHost) Close() error { return nil }
