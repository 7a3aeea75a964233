package main

import (
	"context"
	"errors"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// dialSSH connects to the campaign's SSH host as OpenSSH would: the alias
// from ~/.ssh/config, keys checked against known_hosts.
func dialSSH(ctx context.Context, e *env, c *campaign.Campaign) (remote.Host, error) {
	return nil, errors.New("SSH hosts are not supported by this build")
}
