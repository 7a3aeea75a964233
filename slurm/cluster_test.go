package slurm_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/slurmtest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/slurm"
)

// waitLimit bounds each wait on the real cluster; reaching it means
// something hung.
const waitLimit = 2 * time.Minute

// login connects to the cluster's login node as a campaign does: the ssh
// alias from the test HOME.
func login(t *testing.T, c *slurmtest.Cluster) *remote.SSH {
	t.Helper()
	home := c.Host.Home
	s, err := remote.DialSSH(context.Background(), remote.SSHOptions{Target: c.Host.Alias,
		ConfigFile: filepath.Join(home, ".ssh", "config"),
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}})
	if err != nil {
		t.Fatalf("connecting to the login node: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// states records the states Allocate reported.
type states struct {
	mu   sync.Mutex
	seen []slurm.Job
	ch   chan slurm.Job
}

func newStates() *states { return &states{ch: make(chan slurm.Job, 16)} }

func (s *states) on(j slurm.Job) {
	s.mu.Lock()
	s.seen = append(s.seen, j)
	s.mu.Unlock()
	s.ch <- j
}

// waitFor returns the first reported job in state.
func (s *states) waitFor(t *testing.T, state string) slurm.Job {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case j := <-s.ch:
			if j.State == state {
				return j
			}
		case <-timeout:
			t.Fatalf("no %s state reported within %s", state, waitLimit)
		}
	}
}

func hold(t *testing.T, c *slurmtest.Cluster, gpus string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Exec(ctx, "salloc", "--no-shell", "--job-name=holder", "--gres=gpu:"+gpus, "--time=5"); err != nil {
		t.Fatal(err)
	}
	jobs, _ := c.Jobs(ctx)
	for _, j := range jobs {
		if f := strings.Fields(j); len(f) == 3 && f[1] == "holder" && f[2] == slurm.StateRunning {
			return f[0]
		}
	}
	t.Fatalf("the holding job is not running: %q", jobs)
	return ""
}

func cancel(t *testing.T, c *slurmtest.Cluster, id string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), "scancel", id); err != nil {
		t.Fatal(err)
	}
}

// checkNoJobs fails unless the cluster has nothing pending or running. A
// job just cancelled passes through COMPLETING while slurmd cleans up,
// which takes a while on a loaded machine: that state alone is waited out
// (for up to completingWait), since the job is already given back.
func checkNoJobs(t *testing.T, c *slurmtest.Cluster) {
	t.Helper()
	deadline := time.Now().Add(completingWait)
	for {
		jobs, err := c.Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		settling := len(jobs) > 0 && !slices.ContainsFunc(jobs, func(j string) bool { return !strings.HasSuffix(j, " COMPLETING") })
		if settling && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if len(jobs) > 0 {
			t.Errorf("jobs left on the cluster: %q", jobs)
		}
		return
	}
}

// completingWait bounds the wait for cancelled jobs to finish completing.
const completingWait = 30 * time.Second

func TestCluster(t *testing.T) {
	c := slurmtest.New(t, slurmtest.Options{GPUs: 4})
	lh := login(t, c)
	cl := slurm.New(lh)
	cl.Poll = 200 * time.Millisecond
	req := slurm.Request{Name: "bakeoff-test", Partition: slurmtest.Partition, Gres: "gpu:4", Nodes: 1, Time: 10 * time.Minute}

	t.Run("allocate and release", func(t *testing.T) {
		ctx, cancelCtx := context.WithTimeout(context.Background(), waitLimit)
		defer cancelCtx()
		st := newStates()
		before := time.Now()
		job, err := cl.Allocate(ctx, req, st.on)
		if err != nil {
			t.Fatalf("Allocate: %v\n%s", err, c.Logs())
		}
		if !job.Running() || !slices.Equal(job.Nodes, []string{c.Node}) || job.Name != req.Name {
			t.Fatalf("job %+v, want running on [%s] named %s", job, c.Node, req.Name)
		}
		if len(st.seen) == 0 || st.seen[len(st.seen)-1].State != slurm.StateRunning {
			t.Errorf("states reported %+v, want RUNNING last", st.seen)
		}
		// The end is the limit after the start, which came between the
		// request and the answer.
		after := time.Now()
		if job.End.After(after.Add(req.Time)) || job.End.Before(before.Add(req.Time-time.Minute)) {
			t.Errorf("job ends at %s, want %s after a start between %s and %s", job.End, req.Time, before, after)
		}
		addrs, err := cl.NodeAddrs(ctx, job.Nodes)
		if err != nil || addrs[c.Node] != c.NodeAddr {
			t.Errorf("NodeAddrs = %v, %v; want %s at %s", addrs, err, c.Node, c.NodeAddr)
		}
		again, err := cl.Job(ctx, job.ID)
		if err != nil || !again.Live() {
			t.Errorf("Job(%s) = %+v, %v; want it live", job.ID, again, err)
		}
		if err := cl.Release(ctx, job.ID); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if st, _ := c.JobState(ctx, job.ID); st != slurm.StateCancelled {
			t.Errorf("job %s is %q after Release, want CANCELLED", job.ID, st)
		}
		gone, err := cl.Job(ctx, job.ID)
		if err != nil || gone.Live() {
			t.Errorf("Job(%s) after Release = %+v, %v; want it not live", job.ID, gone, err)
		}
		if err := cl.Release(ctx, job.ID); err != nil {
			t.Errorf("a second Release: %v", err)
		}
		checkNoJobs(t, c)
	})

	// A job waits behind another that holds the GPUs, and runs once that
	// one ends; queued does what the case is about while it waits.
	queuedCases := []struct {
		name   string
		queued func(t *testing.T, ctx context.Context, p slurm.Job)
	}{
		{"pending then running", func(t *testing.T, ctx context.Context, p slurm.Job) {
			if p.Reason != "Resources" || len(p.Nodes) != 0 {
				t.Errorf("pending job %+v, want reason Resources and no nodes", p)
			}
		}},
		{"link dropped in the queue", func(t *testing.T, ctx context.Context, p slurm.Job) {
			// The link drops: salloc dies with its session on the login
			// node, its job stays queued, and Allocate follows it on a new
			// link.
			lh.Drop()
			waitNoSalloc(t, c)
			if state, _ := c.JobState(ctx, p.ID); state != slurm.StatePending {
				t.Fatalf("job %s is %q after the link dropped, want still PENDING", p.ID, state)
			}
		}},
	}
	for _, tc := range queuedCases {
		t.Run(tc.name, func(t *testing.T) {
			holder := hold(t, c, "4")
			ctx, cancelCtx := context.WithTimeout(context.Background(), waitLimit)
			defer cancelCtx()
			st := newStates()
			type result struct {
				job *slurm.Job
				err error
			}
			done := make(chan result, 1)
			go func() {
				j, err := cl.Allocate(ctx, req, st.on)
				done <- result{j, err}
			}()
			p := st.waitFor(t, slurm.StatePending)
			tc.queued(t, ctx, p)
			cancel(t, c, holder)
			r := <-done
			if r.err != nil {
				t.Fatalf("Allocate: %v", r.err)
			}
			if r.job.ID != p.ID || !r.job.Running() {
				t.Errorf("allocated %+v, want job %s running", r.job, p.ID)
			}
			if err := cl.Release(context.Background(), r.job.ID); err != nil {
				t.Fatal(err)
			}
			checkNoJobs(t, c)
		})
	}

	t.Run("interrupted in the queue", func(t *testing.T) {
		holder := hold(t, c, "4")
		defer cancel(t, c, holder)
		ctx, cancelCtx := context.WithCancel(context.Background())
		st := newStates()
		done := make(chan error, 1)
		go func() {
			_, err := cl.Allocate(ctx, req, st.on)
			done <- err
		}()
		p := st.waitFor(t, slurm.StatePending)
		cancelCtx()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Allocate after cancel: %v, want context.Canceled", err)
		}
		if state, _ := c.JobState(context.Background(), p.ID); state != slurm.StateCancelled {
			t.Errorf("the queued job %s is %q after the interruption, want CANCELLED", p.ID, state)
		}
	})
	checkNoJobs(t, c)

	t.Run("refused", func(t *testing.T) {
		bad := req
		bad.Partition = "nope"
		_, err := cl.Allocate(context.Background(), bad, nil)
		if err == nil {
			t.Fatal("Allocate on a partition that does not exist: no error")
		}
		for _, want := range []string{c.Host.Alias, "salloc --no-shell", "--partition=nope", "Invalid partition"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})

	t.Run("unknown job", func(t *testing.T) {
		_, err := cl.Job(context.Background(), "999999")
		if !errors.Is(err, slurm.ErrGone) {
			t.Errorf("Job(999999) = %v, want ErrGone", err)
		}
	})
}

// waitNoSalloc waits until no salloc runs on the login node.
func waitNoSalloc(t *testing.T, c *slurmtest.Cluster) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		ps, err := c.Host.Processes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ps, func(p testhost.Process) bool { return p.Comm == "salloc" }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("salloc still runs %s after its link dropped", waitLimit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
