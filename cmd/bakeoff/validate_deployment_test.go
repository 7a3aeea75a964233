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
func TestValidateDeployment(t *testing.T) {
	e, out, errOut := testEnv()
	if code := run(context.Background(), e, []string{"validate", "testdata/validate/deployment/configs/campaign.yaml"}); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	golden.Check(t, filepath.Join("testdata", "validate", "deployment.golden"), out.Bytes())
}
