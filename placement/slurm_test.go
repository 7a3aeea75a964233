package placement

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/slurm"
)

// queue is a login node whose squeue says one thing of every job.
type queue struct {
	line string // the squeue line; "" for a job Slurm has purged
	err  error  // a login node that cannot be asked
}

func (q queue) Name() string { return "hpc-login" }

func (q queue) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	switch {
	case q.err != nil:
		return nil, nil, q.err
	case q.line == "":
		return nil, []byte("slurm_load_jobs error: Invalid job id specified"), errors.New("exit status 1")
	}
	return []byte(q.line + "\n"), nil, nil
}

// node is a node that answers, under its name in the job.
type node struct {
	remote.Host
	name string
}

func (n node) Name() string { return n.name }

// TestSlurmWatch: a node is lost as soon as Slurm says its job no longer
// holds it, without waiting for it to stop answering; when Slurm says it
// does, or cannot be asked, the node's own answer decides.
func TestSlurmWatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    queue
		want string // in the error; "" for a node still usable
	}{
		{"running", queue{line: "42|RUNNING|None|1:00:00|gpu01|bakeoff-x"}, ""},
		{"time limit", queue{line: "42|TIMEOUT|None|0:00|gpu01|bakeoff-x"}, "slurm job 42 has ended: TIMEOUT"},
		{"preempted", queue{line: "42|PREEMPTED|None|0:00|gpu01|bakeoff-x"}, "slurm job 42 has ended: PREEMPTED"},
		{"purged", queue{}, "slurm job 42 has ended and been purged"},
		{"node taken out", queue{line: "42|RUNNING|None|1:00:00|gpu02|bakeoff-x"}, "slurm took node gpu01 out of job 42, which runs on gpu02"},
		{"login node silent", queue{err: errors.New("connection lost")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &campaign.Campaign{Host: campaign.Host{LinkPatience: time.Second, Slurm: &campaign.SlurmSpec{Login: "hpc-login"}}}
			s := &Slurm{Campaign: c, cl: slurm.New(tc.q), job: &slurm.Job{ID: "42", Nodes: []string{"gpu01"}}}
			err := s.Watch(context.Background(), node{remote.NewLocal(), "gpu01"})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Watch = %v, want the node usable", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Watch = %v, want it lost: %q", err, tc.want)
			}
		})
	}
}

// TestWatchByKind: each provider's answer for a host that answers and one
// that does not. This machine and a dry host are always there.
func TestWatchByKind(t *testing.T) {
	c := &campaign.Campaign{Host: campaign.Host{Local: true}}
	gone := runOnly{goneLocal{remote.NewLocal()}}
	for _, tc := range []struct {
		name string
		p    Provider
		h    remote.Host
		lost bool
	}{
		{"ssh, answers", &SSH{Host: campaign.Host{LinkPatience: time.Second}}, remote.NewLocal(), false},
		{"ssh, gone", &SSH{Host: campaign.Host{LinkPatience: time.Second}}, gone, true},
		{"fleet, gone", &Fleet{LinkPatience: time.Second}, gone, true},
		{"local", &Local{}, gone, false},
		{"dry", &Dry{Campaign: c}, gone, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Watch(context.Background(), tc.h)
			if (err != nil) != tc.lost {
				t.Fatalf("Watch = %v, want lost: %v", err, tc.lost)
			}
		})
	}
}

// goneLocal is a host every command of which fails to reach it.
type goneLocal struct{ remote.Host }

func (goneLocal) Run(context.Context, string) ([]byte, []byte, error) {
	return nil, nil, errors.New("dial tcp 10.9.9.9:22: connect: no route to host")
}
