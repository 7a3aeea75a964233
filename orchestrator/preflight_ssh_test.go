package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/sshdtest"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
)

// TestPreflightOverSSH: the preflight runs on the host, through a real
// sshd, on one host and on every host of a fleet: a removed flag in the
// last scenario stops the campaign before any launch, and each host's
// engine was asked (a preflight phase per host in the journal). The engine
// is the stand-in llama-server, which prints a real llama-server's help.
func TestPreflightOverSSH(t *testing.T) {
	for _, hosts := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d host(s)", hosts), func(t *testing.T) {
			w := newWorld(t)
			llamaPreflightScenarios(w, "args:\n  draft-max: 8\n")
			var hs []remote.Host
			for i := range hosts {
				srv := sshdtest.StartWith(t, sshdtest.Options{Path: filepath.Join(w.root, "bin") + ":/usr/local/bin:/usr/bin:/bin"})
				// A second host of the fleet is the same machine through
				// another sshd, named by its address.
				target := sshdtest.Alias
				if i > 0 {
					target = fmt.Sprintf("%s@127.0.0.1:%d", srv.User, srv.Port)
				}
				h, err := remote.DialSSH(context.Background(), remote.SSHOptions{Target: target, Getenv: srv.Getenv,
					KnownHostsFile: srv.KnownHostsFile, IdentityFiles: []string{srv.KeyFile}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { h.Close() })
				hs = append(hs, h)
			}
			opt := orchestrator.Options{Host: hs[0]}
			if hosts > 1 {
				opt = orchestrator.Options{Hosts: hs}
			}
			setWorkdir(t, w, filepath.Join(w.root, "remote-work-{host}"))
			_, _, err := w.runInProcess(context.Background(), opt)
			var pf *orchestrator.PreflightError
			if !errors.As(err, &pf) {
				t.Fatalf("got %v, want a preflight error", err)
			}
			want := filepath.Join(w.scenDir, "b.yaml") + ":3:3: scenario b: --draft-max has been removed"
			found := 0
			for _, p := range pf.Problems {
				if strings.HasPrefix(p, want) {
					found++
				}
			}
			if found != hosts {
				t.Errorf("%d problems %q, want one per host:\n%s", found, want, strings.Join(pf.Problems, "\n"))
			}
			run := filepath.Join(w.root, "run")
			checkNothingLaunched(t, run)
			entries, err := orchestrator.ReadJournal(filepath.Join(run, results.JournalFile))
			if err != nil {
				t.Fatal(err)
			}
			var asked []string
			for _, e := range entries {
				if e.Phase == string(orchestrator.StepPreflight) && e.Event == "end" {
					asked = append(asked, e.Host)
				}
			}
			if len(asked) != hosts {
				t.Errorf("preflight ran on %q, want %d hosts", asked, hosts)
			}
			if hosts > 1 && (!slices.Contains(asked, hs[0].Name()) || !slices.Contains(asked, hs[1].Name())) {
				t.Errorf("preflight ran on %q, want %s and %s", asked, hs[0].Name(), hs[1].Name())
			}
		})
	}
}

// setWorkdir makes the campaign's host an SSH one with workdir dir: the
// hosts given to the orchestrator are then reached as a user's would be.
func setWorkdir(t *testing.T, w *world, dir string) {
	t.Helper()
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	host := "host:\n  ssh: " + sshdtest.Alias + "\n  workdir: " + dir + "\n  sweep_mode: tunnel"
	if err := os.WriteFile(w.config, []byte(strings.Replace(string(cfg), "host: local", host, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropsAtHelp is this machine as a host of a fleet whose link drops when it
// is asked for the engine's help.
type dropsAtHelp struct {
	remote.Host
	name string
}

func (d dropsAtHelp) Name() string { return d.name }
func (d dropsAtHelp) Run(ctx context.Context, cmd string) ([]byte, []byte, error) {
	if strings.Contains(cmd, "--help") {
		return nil, nil, fmt.Errorf("%s: running %q: %w", d.name, cmd, remote.ErrDisconnected)
	}
	return d.Host.Run(ctx, cmd)
}

// TestPreflightFleetHostDrops: a host of a fleet whose link drops during
// the preflight is given up on, as after a failed prepare, and the campaign
// runs on the others: a dropped link says nothing of the flags.
func TestPreflightFleetHostDrops(t *testing.T) {
	w := newWorld(t)
	w.scenario("a", "")
	w.writeConfig(campaignOpts{scenarios: []string{"a"}})
	setWorkdir(t, w, filepath.Join(w.root, "work-{host}"))
	out, _, err := w.runInProcess(context.Background(), orchestrator.Options{
		Hosts: []remote.Host{dropsAtHelp{remote.NewLocal(), "gpu-flaky"}, remote.NewLocal()}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed > 0 || len(out.Results) != 1 || len(out.Lost) != 1 || out.Lost[0].Host != "gpu-flaky" || !strings.Contains(out.Lost[0].Reason, "preflight: ") {
		t.Errorf("outcome %+v, lost %+v", out.Results, out.Lost)
	}
}
