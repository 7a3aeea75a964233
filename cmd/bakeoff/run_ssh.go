package main

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// dialSSH connects to an SSH host of the campaign as OpenSSH would: the
// alias from ~/.ssh/config, keys checked against known_hosts (a new one added
// only with host.accept_new), agent and identity files for auth.
func dialSSH(ctx context.Context, e *env, h campaign.Host) (remote.Host, error) {
	return remote.DialSSH(ctx, remote.SSHOptions{Target: h.SSH, AcceptNew: h.AcceptNew, Getenv: e.Getenv})
}
