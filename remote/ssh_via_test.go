package remote

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestSSHVia reaches a target through an already connected host, as a
// Slurm campaign reaches its nodes through the login node: the target's
// address comes from HostName when the config gives none, its own
// ProxyJump is not used, its key is checked, and a drop of the jump host's
// link is recovered from on the target's next call.
func TestSSHVia(t *testing.T) {
	e := newSSHEnv(t)
	_, pub, _ := clientKey(t, e.sshDir, "id_ed25519")
	login := startTestSSHServer(t, nil, pub)
	node := startTestSSHServer(t, nil, pub)
	e.writeConfig(t, fmt.Sprintf(`Host login
  HostName 127.0.0.1
  Port %d
Host node7
  ProxyJump nowhere.invalid
`, login.Port))
	e.addKnown(t, login.Port, login.HostKeys[0].PublicKey())
	lh, err := dial(t, e.opts("login"))
	if err != nil {
		t.Fatal(err)
	}
	nodeOpts := e.opts(fmt.Sprintf("node7:%d", node.Port))
	nodeOpts.Via, nodeOpts.HostName = lh, "127.0.0.1"

	// The node's key is not known yet: the error names the node, not the
	// login node.
	_, err = dial(t, nodeOpts)
	var he *HostKeyError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("DialSSH with an unknown node key = %v; want a HostKeyError for the node's address", err)
	}
	e.addKnown(t, node.Port, node.HostKeys[0].PublicKey())
	nh, err := dial(t, nodeOpts)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := nh.Run(testCtx(t), "echo through"); err != nil || string(out) != "through\n" {
		t.Fatalf("Run through the login node = %q, %v", out, err)
	}
	if len(nh.hops) != 1 || nh.hops[0].Host != "127.0.0.1" || nh.hops[0].Port != node.Port {
		t.Errorf("hops = %+v, want the node alone at 127.0.0.1:%d", nh.hops, node.Port)
	}

	// The login node's link drops: the node's next call reconnects both.
	lh.Drop()
	if out, _, err := nh.Run(testCtx(t), "echo again"); err != nil || string(out) != "again\n" {
		// The first call may be the one that learns of the drop.
		if out, _, err = nh.Run(testCtx(t), "echo again"); err != nil || string(out) != "again\n" {
			t.Fatalf("Run after the login link dropped = %q, %v", out, err)
		}
	}

	// Closing the node leaves the login node in use.
	nh.Close()
	if out, _, err := lh.Run(testCtx(t), "echo login"); err != nil || string(out) != "login\n" {
		t.Fatalf("login Run after the node closed = %q, %v", out, err)
	}

	// A node the login node cannot reach: the error says through which host.
	bad := e.opts("node8:1")
	bad.Via, bad.HostName = lh, "127.0.0.1"
	bad.ReconnectAttempts = 1
	_, err = dial(t, bad)
	if err == nil || !strings.Contains(err.Error(), "node8") || !strings.Contains(err.Error(), "through login") {
		t.Fatalf("DialSSH to a closed port through the login node = %v; want an error naming node8 and the login node", err)
	}
}
