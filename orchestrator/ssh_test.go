package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestCampaignOverSSH runs a campaign on this machine reached through a real
// OpenSSH sshd on 127.0.0.1, as it would reach a GPU host: the binary is
// uploaded to the workdir, the server launched detached over SSH, health and
// the smoke request dialed through the connection, and the sweep run either
// on the host (its files downloaded) or here through the tunnel.
func TestCampaignOverSSH(t *testing.T) {
	// The tunnel runs one scenario: every SSH round trip costs, and the
	// host mode already shows a campaign going from one scenario to the next.
	for mode, names := range map[string][]string{"host": {"a", "b"}, "tunnel": {"a"}} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			srv := sshdtest.StartWith(t, sshdtest.Options{Path: filepath.Join(w.root, "bin") + ":/usr/local/bin:/usr/bin:/bin"})
			state := filepath.Join(w.root, "sim-state")
			w.scenario("a", "")
			w.scenario("b", "a", "speculative-algorithm: EAGLE3", "speculative-eagle-topk: 1",
				"speculative-num-steps: 3", "speculative-num-draft-tokens: 4")
			workdir := filepath.Join(w.root, "remote-work")
			w.writeConfig(campaignOpts{
				scenarios: names,
				host:      "host:\n  ssh: " + sshdtest.Alias + "\n  workdir: " + workdir + "\n  sweep_mode: " + mode,
				// SSH sessions get sshd's environment, not this test's: the
				// sim and the fake nvidia-smi are told their state directory.
				nvidiaSMI: "env BAKEOFF_SIM_STATE=" + state + " nvidia-smi",
				engineEnv: "    BAKEOFF_SIM_STATE: " + state + "\n",
			})
			h, err := remote.DialSSH(context.Background(), remote.SSHOptions{Target: sshdtest.Alias, Getenv: srv.Getenv})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			out, _, err := w.runInProcess(context.Background(), orchestrator.Options{Host: h})
			if err != nil {
				t.Fatal(err)
			}
			if out.Failed != 0 {
				t.Fatalf("failed: %+v", out.Results)
			}
			run := readSummary(t, out.RunDir)
			for _, n := range names {
				s := scenarioResult(t, run, n)
				if s.Status != results.StatusOK || len(s.Levels) != 2 {
					t.Errorf("%s: %s, %d levels", n, s.Status, len(s.Levels))
				}
				recs, err := run.Records(n)
				if err != nil || len(recs) != 1+2*8 {
					t.Errorf("%s: %d records (%v)", n, len(recs), err)
				}
				if fi, err := os.Stat(filepath.Join(out.RunDir, n, "round-1", results.ServerLog)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: no server log downloaded (%v)", n, err)
				}
			}
			if _, err := os.Stat(filepath.Join(workdir, "bin", "bakeoff")); err != nil {
				t.Errorf("bakeoff was not uploaded to the workdir: %v", err)
			}
			if run.Manifest.Host.OS != "linux" || len(run.Manifest.Host.GPUs) == 0 {
				t.Errorf("host facts: %+v", run.Manifest.Host)
			}
		})
	}
}
