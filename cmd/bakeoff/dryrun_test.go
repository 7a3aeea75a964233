package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
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

// TestDryRunShippedKimi: the dry run of the seeds' campaign,
// configs/rtx6000-kimi.yaml, in its first round (the other five repeat it
// in their own orders). SGLang is launched with the flags current SGLang
// takes, none it removed or renamed, and no FlashInfer allreduce fusion,
// which it refuses on the host's SM120 GPUs; eagle3-topk4 and
// eagle3-topk1-specv2 differ in the tree and the overlap schedule, the
// difference SGLang still makes. Regenerate with go test -update.
func TestDryRunShippedKimi(t *testing.T) {
	c, err := campaign.Load(filepath.Join("..", "..", "configs", "rtx6000-kimi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.Rounds, c.MinRounds = 1, 0
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opt := orchestrator.Options{Campaign: c, Bakeoff: "/usr/local/bin/bakeoff", Version: "test",
		Now: func() time.Time { return now }, Machine: "here", PID: 4242}
	var out bytes.Buffer
	if err := dryRun(context.Background(), &out, c, opt); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	heading := regexp.MustCompile(`^## \[\d+/\d+\] scenario (\S+)`)
	launches := map[string]string{}
	scenario := ""
	for _, line := range strings.Split(text, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			scenario = m[1]
		}
		if strings.Contains(line, "pid file /data/bakeoff/server.pid: env -- ") {
			launches[scenario] = line
		}
	}
	if len(launches) != 3 {
		t.Fatalf("launches of %d scenarios, want 3:\n%s", len(launches), text)
	}
	for name, line := range launches {
		for _, want := range []string{"/opt/venv/bin/python -m sglang.launch_server ", " --tp-size 8 ", " --cuda-graph-max-bs-decode 128 ", " --max-running-requests 256 "} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: the launch does not show %q:\n%s", name, want, line)
			}
		}
		if got, want := strings.Contains(line, " --disable-overlap-schedule "), name == "eagle3-topk4"; got != want {
			t.Errorf("%s: --disable-overlap-schedule %v, want %v:\n%s", name, got, want, line)
		}
	}
	for _, old := range oldSpellings {
		if m := old.re.FindString(text); m != "" {
			t.Errorf("the dry run shows %q (%s)", strings.TrimSpace(m), old.now)
		}
	}
	// SGLang refuses FlashInfer allreduce fusion on SM120 ("FlashInfer
	// allreduce fusion requires SM90 or SM10X NVIDIA GPUs.").
	if strings.Contains(text, "--flashinfer-allreduce-fusion-backend") {
		t.Errorf("the dry run asks for FlashInfer allreduce fusion, which SGLang refuses on an RTX PRO 6000")
	}
	if strings.Contains(text, "would fail") || strings.Contains(text, "# warning") {
		t.Errorf("the dry run of an idle host shows a failure or a warning:\n%s", text)
	}
	golden.Check(t, filepath.Join("testdata", "dryrun", "rtx6000-kimi.golden"), out.Bytes())
}
