package main

import (
	"context"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// dialSSH connects to the campaign's SSH host as OpenSSH would: the alias
// from ~/.ssh/config, keys checked against known_hosts (a new one added only
// with host.accept_new), agent and identity files for auth.
func dialSSH(ctx context.Context, e *env, c *campaign.Campaign) (remote.Host, error) {
	return remote.DialSSH(ctx, remote.SSHOptions{Target: c.Host.SSH, AcceptNew: c.Host.AcceptNew, Getenv: e.Getenv})
}
