package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// TestDryRunGolden: the dry run of a campaign of each kind of host, as
// --dry-run prints it. The Slurm one shows what runs on the login node: the
// allocation before the campaign and its release after.
func TestDryRunGolden(t *testing.T) {
	tests := []struct {
		kind string
		want []string // what the golden file must show, whatever it holds
	}{
		{"local", []string{"$ # start detached, pid file /work/bakeoff/server.pid: env -- "}},
		{"ssh", []string{"on ssh bench@gpu-box:2222", "$ upload /usr/local/bin/bakeoff → /data/bakeoff/bin/bakeoff"}},
		{"fleet", []string{"a fleet of gpu-a, gpu-b", "/data/bakeoff/gpu-a/server.pid"}},
		{"slurm", []string{"hpc-login$ salloc --no-shell --job-name=bakeoff-dry-slurm --nodes=2 ", "hpc-login$ scancel "}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			c, err := campaign.Load(filepath.Join("testdata", "dryrun", "configs", tt.kind+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if c.Host.Local {
				c.Host.Workdir = "/work/bakeoff" // the default names this user and TMPDIR
			}
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			opt := orchestrator.Options{Campaign: c, Bakeoff: "/usr/local/bin/bakeoff", Version: "test",
				Now: func() time.Time { return now }, Machine: "here", PID: 4242}
			var out bytes.Buffer
			if err := dryRun(context.Background(), &out, c, opt); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the dry run does not show %q", want)
				}
			}
			if strings.Contains(out.String(), "would fail") || strings.Contains(out.String(), "# warning") {
				t.Errorf("the dry run of an idle host shows a failure or a warning:\n%s", out.String())
			}
			golden.Check(t, filepath.Join("testdata", "dryrun", tt.kind+".golden"), out.Bytes())
		})
	}
}
