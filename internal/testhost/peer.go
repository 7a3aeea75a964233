package testhost

import (
	"context"
	"testing"
)

// Connect joins two hosts by a point-to-point link of their own, as the
// machines of one cluster are joined: each then reaches the other at its IP
// (the address a campaign's SSH connection to it comes in on). The link goes
// when either host is torn down, with its namespace. A campaign whose launch
// spans both hosts (the ranks of one model over two nodes) needs it: the
// hosts' links to this machine reach this machine only.
func Connect(t testing.TB, a, b *Host) {
	t.Helper()
	ctx := context.Background()
	id := randomHex(3)
	// Interface names are at most 15 bytes: "bp" + 6 hex + side.
	ea, eb := "bp"+id+"a", "bp"+id+"b"
	steps := [][]string{
		{"link", "add", ea, "netns", a.Name, "type", "veth", "peer", "name", eb, "netns", b.Name},
		{"-n", a.Name, "link", "set", ea, "up"},
		{"-n", b.Name, "link", "set", eb, "up"},
		{"-n", a.Name, "route", "add", b.IP + "/32", "dev", ea, "src", a.IP},
		{"-n", b.Name, "route", "add", a.IP + "/32", "dev", eb, "src", b.IP},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			t.Fatalf("testhost: connecting %s and %s: %v", a.Name, b.Name, err)
		}
	}
}
