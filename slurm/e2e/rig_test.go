package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/slurmtest"
	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
	"github.com/bakeoff-dev/bakeoff/results"
)

// slurmEnv switches the campaigns on (make slurm; .ci/run).
const slurmEnv = "BAKEOFF_SLURM"

const (
	// runTimeout bounds one `bakeoff run`; the campaigns take seconds, so
	// reaching it means something hung, which is itself the failure.
	runTimeout = 10 * time.Minute
	// waitTimeout bounds a wait for something a running campaign does.
	waitTimeout = 2 * time.Minute
	// settleTimeout bounds the wait for the host's processes to be gone.
	settleTimeout = 30 * time.Second
	gpus          = 4
)

// rig is a Slurm cluster and a campaign for it, run by the real binary
// with HOME holding the login node's alias and known_hosts entry.
type rig struct {
	t   *testing.T
	c   *slurmtest.Cluster
	dir string
	env []string
	// cut are the nodes the test cut off: nothing on them can be stopped.
	cut map[string]bool
}

// newRig starts a one-node cluster and a rig for t's campaigns on it.
func newRig(t *testing.T) *rig {
	t.Helper()
	return rigOn(t, newCluster(t, 1))
}

// newCluster starts a cluster of nodes nodes, for t's campaigns or those
// of its subtests, which then share it.
func newCluster(t *testing.T, nodes int) *slurmtest.Cluster {
	t.Helper()
	campaigntest.Need(t, slurmEnv, "Slurm campaigns", "make slurm; .ci/run does")
	o := slurmtest.Options{Nodes: nodes, GPUs: gpus, HostOptions: []testhost.Option{testhost.WithNvidiaSMI(bakeoffBin)}}
	if nodes > 1 {
		// A node cut off is set DOWN while the campaign that lost it still
		// runs, as a cluster's controller would set it DOWN within minutes
		// while a night's campaign runs. Not less: the controller pings
		// every third of it, and a ping to a node gone silent can take
		// MessageTimeout (10 s) to fail.
		o.SlurmdTimeout = 30 * time.Second
	}
	return slurmtest.New(t, o)
}

// rigOn is a rig for t's campaigns on cluster c: a directory of its own,
// and, when t ends, the check that nothing is left on c's nodes.
func rigOn(t *testing.T, c *slurmtest.Cluster) *rig {
	t.Helper()
	r := &rig{t: t, c: c, dir: campaigntest.NewDir(t), env: campaigntest.Env(t, c.Host.Home), cut: map[string]bool{}}
	t.Cleanup(r.checkNothingLeft)
	return r
}

// spec is a test campaign.
type spec struct {
	rounds int
	// time is host.slurm.time; margin host.slurm.margin.
	time, margin string
	// simLoadTime is how long the sim takes to load, in simulated time.
	simLoadTime string
	// nodes is host.slurm.nodes (1 when 0); linkPatience host.link_patience.
	nodes        int
	linkPatience string
	// bArgs are more args of scenario b, the campaign's last.
	bArgs map[string]any
}

// write renders the campaign (two scenarios of the sim) and returns the
// config path.
func (r *rig) write(s spec) string {
	r.t.Helper()
	if s.time == "" {
		// An hour: released at the end anyway, and long enough that no
		// round is left out for time on a loaded machine.
		s.time = "60"
	}
	if s.margin == "" {
		s.margin = "30s"
	}
	if s.simLoadTime == "" {
		s.simLoadTime = "50s"
	}
	for _, name := range []string{"a", "b"} {
		args := map[string]any{"tp": 1}
		if name == "b" {
			maps.Copy(args, s.bArgs)
		}
		r.writeYAML(filepath.Join("scenarios", name+".yaml"), map[string]any{"name": name, "engine": "sglang",
			"model": "/models/sim", "args": args})
	}
	host := map[string]any{
		"slurm": map[string]any{"login": r.c.Host.Alias, "partition": slurmtest.Partition, "gres": fmt.Sprintf("gpu:%d", gpus),
			"nodes": max(s.nodes, 1), "time": s.time, "margin": s.margin},
		"workdir": r.c.Host.Workdir,
	}
	if s.nodes > 1 {
		// The nodes share this machine's file system, as a cluster's
		// nodes share a network one.
		host["workdir"] = filepath.Join(r.c.Host.Dir, "work-{host}")
	}
	if s.linkPatience != "" {
		host["link_patience"] = s.linkPatience
	}
	doc := map[string]any{
		"campaign": "slurm-e2e",
		"host":     host,
		"engine": map[string]any{
			"command":        []string{"{bakeoff}", "sim", "--sim-speed", "50", "--sim-load-time", s.simLoadTime},
			"port":           30000,
			"health_timeout": "2m",
			"poll_interval":  "100ms",
			"stop_grace":     "3s",
		},
		"gpu":       map[string]any{"max_used_mib": 1024, "wait_timeout": "20s"},
		"power":     map[string]any{"source": "off"},
		"sweep":     map[string]any{"concurrency": []int{2}, "requests": 4, "max_tokens": 16, "warmup": 1, "prompts": "builtin", "temperature": 0, "ignore_eos": true},
		"baseline":  "a",
		"scenarios": []string{"a", "b"},
		"rounds":    max(s.rounds, 1),
	}
	return r.writeYAML(filepath.Join("configs", "slurm-e2e.yaml"), doc)
}

func (r *rig) writeYAML(rel string, doc any) string {
	r.t.Helper()
	return campaigntest.WriteYAML(r.t, r.dir, rel, doc)
}

// proc is one `bakeoff` process; the test reads its output while it runs.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *testbin.SyncBuffer
	done           chan struct{}
	err            error
}

// start starts `bakeoff ARGS` in its own process group.
func (r *rig) start(args ...string) *proc {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := campaigntest.InGroup(exec.CommandContext(ctx, bakeoffBin, args...))
	cmd.Env, cmd.Dir = r.env, r.dir
	p := &proc{cmd: cmd, stdout: &testbin.SyncBuffer{}, stderr: &testbin.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		r.t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); cancel(); close(p.done) }()
	r.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

// wait waits for the process to end and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	<-p.done
	code, exited := campaigntest.ExitCode(p.err)
	if !exited {
		t.Fatalf("bakeoff: %v\n%s", p.err, p)
	}
	return code
}

func (p *proc) String() string {
	return fmt.Sprintf("stdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
}

// run runs `bakeoff ARGS` to the end.
func (r *rig) run(args ...string) (int, *proc) {
	r.t.Helper()
	p := r.start(args...)
	return p.wait(r.t), p
}

// waitFor waits until cond holds while p runs, failing the test when p
// ends first or waitTimeout passes; what says what is waited for, as in
// "bakeoff ended before printing ...".
func (r *rig) waitFor(p *proc, what string, cond func() bool) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if campaigntest.Until(ctx, p.done, 50*time.Millisecond, cond) {
		return
	}
	select {
	case <-p.done:
		r.t.Fatalf("bakeoff ended before %s\n%s", what, p)
	default:
		r.t.Fatalf("bakeoff went %s without %s\n%s", waitTimeout, what, p)
	}
}

// waitOutput waits until stderr holds text.
func (r *rig) waitOutput(p *proc, text string) {
	r.t.Helper()
	r.waitFor(p, fmt.Sprintf("printing %q", text), func() bool { return strings.Contains(p.stderr.String(), text) })
}

// waitJournal waits until the run's journal holds an entry pred accepts.
func (r *rig) waitJournal(p *proc, runDir string, pred func(orchestrator.JournalEntry) bool) {
	r.t.Helper()
	r.waitFor(p, "its journal showing what the test waits for", func() bool { return campaigntest.JournalHas(runDir, pred) })
}

// manifest reads a run's manifest.
func manifest(t *testing.T, runDir string) results.Manifest {
	t.Helper()
	var m results.Manifest
	b, err := os.ReadFile(filepath.Join(runDir, results.ManifestFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatalf("reading the manifest: %v", err)
	}
	return m
}

// checkNoJobs fails unless the cluster holds no pending or running job.
func (r *rig) checkNoJobs() {
	r.t.Helper()
	jobs, err := r.c.Jobs(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	if len(jobs) > 0 {
		r.t.Errorf("jobs left on the cluster: %q", jobs)
	}
}

// jobState is a job's state, failing the test when it cannot be read.
func (r *rig) jobState(id string) string {
	r.t.Helper()
	st, err := r.c.JobState(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// checkNothingLeft waits for every node that was not cut off to hold
// nothing but sshd and the cluster's daemons: servers and sweeps are
// stopped before a campaign ends.
func (r *rig) checkNothingLeft() {
	r.t.Helper()
	daemons := r.c.Pids()
	for _, n := range r.c.Nodes {
		if r.cut[n.Name] {
			continue
		}
		campaigntest.CheckNothingLeft(r.t, n.Host, settleTimeout, "node "+n.Name, func(p testhost.Process) bool {
			_, ok := daemons[p.Pid]
			return ok || p.Comm == "slurmscriptd"
		})
	}
}

// runDirOf finds the one run directory under results/.
func (r *rig) runDirOf() string {
	r.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(r.dir, "results", "slurm-e2e", "*"))
	if len(dirs) != 1 {
		r.t.Fatalf("run directories %q, want one", dirs)
	}
	return dirs[0]
}

// waitRunDir waits for the run directory to appear.
func (r *rig) waitRunDir(p *proc) string {
	r.t.Helper()
	var dirs []string
	r.waitFor(p, "making its run directory", func() bool {
		dirs, _ = filepath.Glob(filepath.Join(r.dir, "results", "slurm-e2e", "*", results.JournalFile))
		return len(dirs) == 1
	})
	return filepath.Dir(dirs[0])
}
