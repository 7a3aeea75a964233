package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/remote"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/slurm"
)

// SlurmReleaseTimeout bounds the release of an allocation at the end, after
// a failure or an interruption: scancel and the wait for the job to end.
const SlurmReleaseTimeout = time.Minute

// SlurmQueryTimeout bounds the question Watch asks the login node about
// the job, so that a login node that hangs leaves the node's own answer to
// decide instead of holding the round.
const SlurmQueryTimeout = 30 * time.Second

// DryNode names the node of a dry Slurm allocation: no job exists, so no
// node is known.
const DryNode = "NODE"

// DryJob stands for the id of a dry Slurm allocation.
const DryJob = "JOBID"

// Slurm places a campaign on the nodes of a Slurm allocation: it connects to
// the login node, reattaches to a resumed run's job while it runs (else asks
// for a new one and waits in the queue), and connects to each node through
// the login node. Release ends the job however the run ended.
type Slurm struct {
	Campaign *campaign.Campaign
	// ResumeDir is the run being resumed, whose job may still run.
	ResumeDir string
	Env       Env

	spec  *campaign.SlurmSpec
	login *remote.SSH
	cl    *slurm.Cluster
	job   *slurm.Job
	nodes []*remote.SSH
	// reattached says the job is the one a resumed run had, not a new one.
	reattached bool
}

// SlurmJobName names a campaign's job in squeue: bakeoff's, and which
// campaign.
func SlurmJobName(c *campaign.Campaign) string { return "bakeoff-" + c.Name }

var _ Provider = (*Slurm)(nil)

// Plan is the allocation's nodes, asked for and released on the login
// node; the deadline is the job's end less the margin kept for teardown.
func (s *Slurm) Plan() Plan {
	spec := s.Campaign.Host.Slurm
	on := "the Slurm login node " + spec.Login
	return Plan{
		Where:      "the nodes of a Slurm allocation through " + spec.Login,
		Hosts:      max(spec.Nodes/s.Campaign.NodesPerLaunch(), 1),
		Shown:      DryNode,
		Before:     []DryLine{{Host: spec.Login, On: on, Line: slurmRequest(s.Campaign).Command()}},
		After:      []DryLine{{Host: spec.Login, On: on, Line: slurm.ReleaseCommand(DryJob)}},
		Limit:      fmt.Sprintf("in the Slurm allocation, less host.slurm.margin %s", spec.Margin),
		ResumeNote: "it asks for a new allocation",
	}
}

// Acquire connects to the login node, gets the allocation (the resumed
// run's job, or a new one) and connects to its nodes. On any failure the
// allocation it made is released before it returns.
func (s *Slurm) Acquire(ctx context.Context) (*Hosts, error) {
	c := s.Campaign
	s.spec = c.Host.Slurm
	login, err := remote.DialSSH(ctx, remote.SSHOptions{Target: s.spec.Login, AcceptNew: c.Host.AcceptNew, Getenv: s.Env.Getenv})
	if err != nil {
		return nil, fmt.Errorf("connecting to the Slurm login node: %w", err)
	}
	s.Env.connected(login)
	s.login, s.cl = login, slurm.New(login)
	s.cl.Now = s.Env.now
	if s.ResumeDir != "" {
		s.job = s.reattach(ctx, s.ResumeDir)
	}
	if s.job == nil {
		if err := s.allocate(ctx, c); err != nil {
			login.Close()
			s.login = nil
			return nil, err
		}
	}
	if err := s.connectNodes(ctx, c); err != nil {
		s.Release(ctx)
		return nil, err
	}
	return &Hosts{Hosts: s.hosts(), Fleet: true, Deadline: s.deadline(), Allocation: s.allocation()}, nil
}

// reattach returns the resumed run's job if the manifest names one on this
// login node and squeue says it still runs; otherwise it says why not and
// returns nil.
func (s *Slurm) reattach(ctx context.Context, runDir string) *slurm.Job {
	var m results.Manifest
	data, err := os.ReadFile(filepath.Join(runDir, results.ManifestFile))
	if err != nil || json.Unmarshal(data, &m) != nil || m.Allocation == nil || m.Allocation.System != "slurm" {
		return nil
	}
	a := m.Allocation
	if a.Login != s.spec.Login {
		s.Env.notef("slurm: the run's job %s was on login node %s, not %s; asking for a new allocation\n", a.JobID, a.Login, s.spec.Login)
		return nil
	}
	job, err := s.cl.Job(ctx, a.JobID)
	switch {
	case errors.Is(err, slurm.ErrGone):
		s.Env.notef("slurm: the run's job %s has ended; asking for a new allocation\n", a.JobID)
		return nil
	case err != nil:
		s.Env.notef("slurm: cannot read the run's job %s (%v); asking for a new allocation\n", a.JobID, err)
		return nil
	case !job.Running():
		s.Env.notef("slurm: the run's job %s is %s, not running; asking for a new allocation\n", a.JobID, job.State)
		if job.Live() {
			// A job of this run that pends or is suspended would only hold
			// the queue; the new one replaces it.
			s.release(ctx, job.ID)
		}
		return nil
	}
	s.reattached = true
	s.Env.notef("slurm: reattached to job %s on %s (%s left)\n", job.ID, strings.Join(job.Nodes, ","), leftText(job, s.Env.now()))
	return job
}

// allocate asks for the campaign's allocation and waits for it, a line per
// change of the job's state.
func (s *Slurm) allocate(ctx context.Context, c *campaign.Campaign) error {
	req := slurmRequest(c)
	what := fmt.Sprintf("%d node(s)", req.Nodes)
	if req.Gres != "" {
		what += " with " + req.Gres
	}
	if req.Partition != "" {
		what += " in partition " + req.Partition
	}
	s.Env.notef("slurm: asking %s for %s for %s (job %s)\n", s.spec.Login, what, s.spec.TimeText, req.Name)
	job, err := s.cl.Allocate(ctx, req, func(j slurm.Job) {
		line := fmt.Sprintf("job %s %s", j.ID, j.State)
		if j.State == slurm.StatePending && j.Reason != "" && j.Reason != "None" {
			line += " (" + j.Reason + ")"
		}
		if j.Running() {
			line += " on " + strings.Join(j.Nodes, ",")
		}
		s.Env.notef("%s slurm: %s\n", s.Env.now().UTC().Format("15:04:05"), line)
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while waiting in the queue; the queued job was cancelled: %w", err)
		}
		return err
	}
	s.job = job
	s.Env.notef("slurm: job %s runs on %s until %s (%s left)\n", job.ID, strings.Join(job.Nodes, ","),
		job.End.Local().Format("15:04:05"), leftText(job, s.Env.now()))
	return nil
}

// slurmRequest is the allocation a campaign asks for. --no-kill: a node
// that fails loses its round to the other nodes, as a fleet's host does;
// without it Slurm would end the whole job, and the rounds running on the
// nodes that still work with it.
func slurmRequest(c *campaign.Campaign) slurm.Request {
	s := c.Host.Slurm
	return slurm.Request{Name: SlurmJobName(c), Partition: s.Partition, Account: s.Account, Gres: s.Gres,
		Nodes: s.Nodes, Time: s.Time, NoKill: true}
}

// connectNodes opens an SSH connection to each node through the login node,
// at the node's NodeAddr unless the ssh config names a HostName for it.
func (s *Slurm) connectNodes(ctx context.Context, c *campaign.Campaign) error {
	addrs, err := s.cl.NodeAddrs(ctx, s.job.Nodes)
	if err != nil {
		return err
	}
	for _, n := range s.job.Nodes {
		h, err := remote.DialSSH(ctx, remote.SSHOptions{Target: n, HostName: addrs[n], Via: s.login,
			AcceptNew: c.Host.AcceptNew, Getenv: s.Env.Getenv})
		if err != nil {
			return fmt.Errorf("connecting to node %s of Slurm job %s through %s: %w", n, s.job.ID, s.spec.Login, err)
		}
		s.nodes = append(s.nodes, h)
	}
	return nil
}

// hosts are the nodes as the orchestrator's hosts, in Slurm's order.
func (s *Slurm) hosts() []remote.Host {
	out := make([]remote.Host, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n
	}
	return out
}

// allocation is the job as the manifest records it.
func (s *Slurm) allocation() *results.Allocation {
	return &results.Allocation{System: "slurm", JobID: s.job.ID, Login: s.spec.Login, Nodes: s.job.Nodes, End: s.job.End.UTC()}
}

// deadline is when no round may still be running: the allocation's end
// minus the margin kept for teardown; zero for a job without a limit.
func (s *Slurm) deadline() time.Time {
	if s.job.End.IsZero() {
		return time.Time{}
	}
	return s.job.End.Add(-s.spec.Margin)
}

// Watch asks Slurm first: a node whose job has ended (its time limit, a
// preemption, an administrator's scancel) or that Slurm took out of the job
// (a node set DOWN under --no-kill) is lost at once, since Slurm ended what
// ran on it; waiting out the link patience would only delay its round's
// move. When Slurm cannot be asked, or says the node is still the job's,
// the node's own answer decides, as for any SSH host.
func (s *Slurm) Watch(ctx context.Context, h remote.Host) error {
	if err := s.holds(ctx, h.Name()); err != nil {
		return err
	}
	return answers(ctx, s.Env, h, s.Campaign.Host.LinkPatience)
}

// holds returns why the job no longer holds node, or nil when it does or
// the login node cannot say.
func (s *Slurm) holds(ctx context.Context, node string) error {
	if s.job == nil {
		return nil
	}
	qctx, cancel := context.WithTimeout(ctx, SlurmQueryTimeout)
	defer cancel()
	j, err := s.cl.Job(qctx, s.job.ID)
	switch {
	case errors.Is(err, slurm.ErrGone):
		return fmt.Errorf("slurm job %s has ended and been purged", s.job.ID)
	case err != nil:
		return nil
	case !j.Running():
		return fmt.Errorf("slurm job %s has ended: %s", s.job.ID, stateText(j))
	case len(j.Nodes) > 0 && !slices.Contains(j.Nodes, node):
		return fmt.Errorf("slurm took node %s out of job %s, which runs on %s", node, s.job.ID, strings.Join(j.Nodes, ","))
	}
	return nil
}

// Release releases the allocation and closes the connections. It runs at
// the end, after a failure and after Ctrl-C or SIGTERM, so it works on a
// context of its own that survives their cancellation, bounded by
// SlurmReleaseTimeout.
func (s *Slurm) Release(ctx context.Context) {
	for _, n := range s.nodes {
		n.Close()
	}
	if s.job != nil {
		s.release(ctx, s.job.ID)
	}
	if s.login != nil {
		s.login.Close()
	}
}

func (s *Slurm) release(ctx context.Context, id string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SlurmReleaseTimeout)
	defer cancel()
	// A job Slurm ended on its own (its time limit, an administrator's
	// scancel, every node failed) is said to have ended, not released:
	// its end is why the campaign's nodes went away.
	if j, err := s.cl.Job(rctx, id); errors.Is(err, slurm.ErrGone) || (err == nil && !j.Live() && j.State != slurm.StateCompleting) {
		state := "and been purged"
		if err == nil {
			state = stateText(j)
		}
		s.Env.notef("slurm: job %s had already ended %s; nothing to release\n", id, state)
		return
	}
	if err := s.cl.Release(rctx, id); err != nil {
		// Cancelled, but a node that stopped answering before Slurm set it
		// DOWN holds the job in COMPLETING until Slurm does: there is
		// nothing left to cancel by hand.
		if j, jerr := s.cl.Job(rctx, id); jerr == nil && j.State == slurm.StateCompleting {
			s.Env.notef("slurm: cancelled job %s; it stays COMPLETING until Slurm has ended it on every node (a node that no longer answers, until Slurm sets it DOWN)\n", id)
			return
		}
		s.Env.notef("bakeoff run: releasing Slurm job %s: %v\n  cancel it by hand: ssh %s scancel %s\n", id, err, s.spec.Login, id)
		return
	}
	s.Env.notef("slurm: released job %s\n", id)
}

// stateText is the job's state with Slurm's reason for it, if it gives one.
func stateText(j *slurm.Job) string {
	if j.Reason != "" && j.Reason != "None" {
		return j.State + " (" + j.Reason + ")"
	}
	return j.State
}

// leftText is the time a job has left, to the second.
func leftText(j *slurm.Job, now time.Time) string {
	if j.End.IsZero() {
		return "no time limit"
	}
	return max(j.TimeLeft(now), 0).Round(time.Second).String()
}
