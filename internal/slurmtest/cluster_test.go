package slurmtest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCluster starts a cluster, allocates its GPUs from inside the host,
// releases them, and checks that the teardown leaves nothing running.
func TestCluster(t *testing.T) {
	var c *Cluster
	t.Run("run", func(t *testing.T) {
		c = New(t, Options{GPUs: 4})
		ctx := context.Background()
		out, err := c.Exec(ctx, "salloc", "--no-shell", "--job-name=slurmtest", "--gres=gpu:4", "--time=1")
		if err != nil {
			t.Fatalf("salloc: %v\n%s", err, c.Logs())
		}
		_ = out
		jobs, err := c.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 || !strings.HasSuffix(jobs[0], " slurmtest RUNNING") {
			t.Fatalf("jobs %q, want one running slurmtest", jobs)
		}
		id := strings.Fields(jobs[0])[0]
		if _, err := c.Exec(ctx, "scancel", id); err != nil {
			t.Fatal(err)
		}
		waitCancelled(t, c, id)
	})
	if c == nil {
		return
	}
	// The subtest's cleanup has run: every daemon must be gone.
	for pid, name := range c.Pids() {
		if procAlive(pid) {
			t.Errorf("%s (pid %d) still running after the cluster's teardown", name, pid)
		}
	}
}

// TestTwoNodes starts a two-node cluster, allocates both nodes with
// --no-kill, cuts the second one off, and checks what Slurm does: once the
// node stops answering, the controller sets it DOWN and takes it out of the
// job, which runs on with the node it has left.
func TestTwoNodes(t *testing.T) {
	// The controller pings every third of SlurmdTimeout, and a ping to a
	// node gone silent can take MessageTimeout (10 s) to fail: a shorter
	// one risks pings that never finish in time to set the node DOWN.
	c := New(t, Options{Nodes: 2, GPUs: 2, SlurmdTimeout: 30 * time.Second})
	ctx := context.Background()
	if len(c.Nodes) != 2 || c.Nodes[0].Name != c.Node || c.Nodes[1].Host == c.Host {
		t.Fatalf("nodes %+v, want two, the first on the login host", c.Nodes)
	}
	if _, err := c.Exec(ctx, "salloc", "--no-shell", "--no-kill", "--job-name=slurmtest", "--nodes=2", "--gres=gpu:2", "--time=5"); err != nil {
		t.Fatalf("salloc: %v\n%s", err, c.Logs())
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || !strings.HasSuffix(jobs[0], " slurmtest RUNNING") {
		t.Fatalf("jobs %q (%v), want one running slurmtest", jobs, err)
	}
	id := strings.Fields(jobs[0])[0]
	out, err := c.Exec(ctx, "squeue", "-h", "-j", id, "-o", "%N")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := c.Exec(ctx, "scontrol", "show", "hostnames", strings.TrimSpace(string(out)))
	got, want := strings.Fields(string(hosts)), []string{c.Nodes[0].Name, c.Nodes[1].Name}
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("job %s runs on %q (%v), want both nodes", id, hosts, err)
	}

	lost := c.Nodes[1].Name
	c.CutNode(lost)
	// Setting the node DOWN, the controller takes it out of the job.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		nodes, err := c.JobNodes(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(nodes, []string{c.Node}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s holds %v two minutes after node %s was cut off, want only %s\n%s", id, nodes, lost, c.Node, c.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st, err := c.JobState(ctx, id); err != nil || st != "RUNNING" {
		t.Fatalf("job %s is %q (%v) after node %s went down, want RUNNING (--no-kill)\n%s", id, st, err, lost, c.Logs())
	}
	if _, err := c.Exec(ctx, "scancel", id); err != nil {
		t.Fatal(err)
	}
	waitCancelled(t, c, id)
}

// waitCancelled waits, up to a minute, for job id to be CANCELLED.
func waitCancelled(t *testing.T, c *Cluster, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := c.JobState(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st == "CANCELLED" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s a minute after scancel", id, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
