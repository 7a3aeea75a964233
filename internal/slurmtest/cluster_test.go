package slurmtest

import (
	"context"
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
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := c.JobState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if st == "CANCELLED" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s is %s after scancel", id, st)
			}
			time.Sleep(100 * time.Millisecond)
		}
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
