package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
)

// BenchmarkPreflightOverSSH measures what the preflight adds to a
// campaign's start beyond the engine's own --help: a campaign of two `bakeoff
// sim` scenarios on this machine through a real sshd, whose last scenario
// carries a flag the sim does not take, so that the campaign ends after the
// preflight. Per iteration: preflight-ms is the preflight phase as the
// journal times it, help-ms the same help command run alone over the same
// connection, overhead-ms their difference (the compute-capability query,
// parsing and checking); each reported as the median of the iterations.
// docs/PERFORMANCE.md has the figures.
//
//	go test -run '^$' -bench PreflightOverSSH -benchtime 10x ./orchestrator/
func BenchmarkPreflightOverSSH(b *testing.B) {
	root := b.TempDir()
	for _, d := range []string{"bin", "sim-state", "scenarios", "configs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.Symlink(bakeoffBin, filepath.Join(root, "bin", "nvidia-smi")); err != nil {
		b.Fatal(err)
	}
	srv := sshdtest.StartWith(b, sshdtest.Options{Path: filepath.Join(root, "bin") + ":/usr/local/bin:/usr/bin:/bin"})
	h, err := remote.DialSSH(context.Background(), remote.SSHOptions{Target: sshdtest.Alias, Getenv: srv.Getenv})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	state := filepath.Join(root, "sim-state")
	write := func(rel, body string) string {
		p := filepath.Join(root, rel)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	write("scenarios/a.yaml", "name: a\nengine: sglang\nmodel: /models/sim\nargs:\n  tp-size: 1\n  enable-metrics: true\n")
	write("scenarios/b.yaml", "extends: a\nargs:\n  no-such-flag: 1\n")
	cfg := write("configs/bench.yaml", fmt.Sprintf(`campaign: preflight-bench
host:
  ssh: %s
  workdir: %s
engine:
  command: ["{bakeoff}", "sim", "--sim-speed", "50"]
  port: %d
  env: {BAKEOFF_SIM_STATE: %s}
gpu:
  nvidia_smi: env BAKEOFF_SIM_STATE=%s nvidia-smi
sweep:
  concurrency: [1]
  requests: 1
scenarios: [a, b]
`, sshdtest.Alias, filepath.Join(root, "work"), testbin.FreePort(b), state, state))
	c, err := campaign.Load(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var preflight, help []time.Duration
	for i := 0; b.Loop(); i++ {
		var took time.Duration
		opt := orchestrator.Options{Campaign: c, Host: h, Bakeoff: bakeoffBin, Machine: "bench", PID: os.Getpid(),
			OutDir: filepath.Join(root, fmt.Sprintf("run-%d", i)),
			Events: func(e orchestrator.Event) {
				if e.Kind == orchestrator.EventPhaseEnd && e.Phase == orchestrator.StepPreflight {
					took = e.Duration
				}
			}}
		_, err := orchestrator.Run(context.Background(), opt)
		var pf *orchestrator.PreflightError
		if !errors.As(err, &pf) || took == 0 {
			b.Fatalf("the campaign did not stop at the preflight: %v", err)
		}
		preflight = append(preflight, took)
		hc, err := campaign.RenderHelp(c, c.Scenarios[0], campaign.On{Bakeoff: filepath.Join(root, "work", "bin", "bakeoff"),
			Workdir: filepath.Join(root, "work")})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, _, err := h.Run(context.Background(), "cd "+campaign.ShellQuote(filepath.Join(root, "work"))+" && "+hc.Command); err != nil {
			b.Fatal(err)
		}
		help = append(help, time.Since(start))
	}
	mp, mh := median(preflight), median(help)
	b.ReportMetric(float64(mp.Microseconds())/1000, "preflight-ms")
	b.ReportMetric(float64(mh.Microseconds())/1000, "help-ms")
	b.ReportMetric(float64((mp-mh).Microseconds())/1000, "overhead-ms")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
