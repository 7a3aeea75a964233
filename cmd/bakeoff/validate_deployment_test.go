package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// TestValidateDeployment: validate shows each deployment host by host: its
// roles' start order, then each node's processes with their ports, GPUs and
// launch commands, a multi-node one's addresses as NODE0, NODE1.
// With launches_per_host, it shows each slot's GPUs and ports.
func TestValidateDeployment(t *testing.T) {
	for _, name := range []string{"deployment", "slots", "slots-tp1"} {
		t.Run(name, func(t *testing.T) {
			e, out, errOut := testEnv()
			if code := run(context.Background(), e, []string{"validate", filepath.Join("testdata", "validate", name, "configs", "campaign.yaml")}); code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			golden.Check(t, filepath.Join("testdata", "validate", name+".golden"), out.Bytes())
		})
	}
}
