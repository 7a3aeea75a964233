// Package slurm asks a Slurm cluster for an allocation and follows it, by
// running Slurm's own commands (salloc, squeue, scontrol, sinfo, scancel) on
// the cluster's login node. It knows nothing of SSH: the login node is any
// Runner, which remote.Host is. Output is read in the fixed formats those
// commands take (-h -o), never their human tables. See docs/SLURM.md.
package slurm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Runner runs a shell command line on the login node and returns its output;
// a non-zero exit is an error that quotes stderr. remote.Host satisfies it.
type Runner interface {
	Name() string
	Run(ctx context.Context, cmd string) (stdout, stderr []byte, err error)
}

// Defaults.
const (
	// DefaultPoll is how often squeue is asked about a job being waited for.
	DefaultPoll = 2 * time.Second
	// DefaultReleaseWait bounds the wait for a cancelled job to leave the
	// running states.
	DefaultReleaseWait = 30 * time.Second
)

// ErrGone is wrapped by Job's error when the controller no longer knows the
// job (it ended long enough ago to be purged, or never existed).
var ErrGone = errors.New("job not known to the controller")

// Job states, as squeue's %T prints them.
const (
	StatePending     = "PENDING"
	StateRunning     = "RUNNING"
	StateConfiguring = "CONFIGURING"
	StateCompleting  = "COMPLETING"
	StateCancelled   = "CANCELLED"
	StateTimeout     = "TIMEOUT"
)

// liveStates are the states of a job that holds, or may still get, its
// nodes.
var liveStates = []string{StatePending, StateConfiguring, StateRunning, "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
	"REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD"}

// Request is what an allocation asks for; empty fields are left to the
// cluster's defaults.
type Request struct {
	// Name is the job's name (--job-name): it says the job is bakeoff's and
	// which campaign it serves, in squeue and in the cluster's accounting.
	Name      string
	Partition string
	Account   string
	// Gres is per node, as --gres takes it ("gpu:8").
	Gres string
	// Nodes is how many nodes (--nodes); at least 1.
	Nodes int
	// Time is the time limit (--time); Slurm counts whole minutes.
	Time time.Duration
	// NoKill keeps the allocation when one of its nodes fails (--no-kill):
	// Slurm takes the failed node out of the job and the job runs on with
	// the others. Without it, Slurm ends the whole job (NODE_FAIL) once it
	// sets a node of it DOWN.
	NoKill bool
}

// Job is an allocation as squeue last showed it.
type Job struct {
	ID     string
	Name   string
	State  string // StatePending, StateRunning, ...
	Reason string // why it pends ("Resources", "Priority"); "None" when running
	// Nodes are the allocated nodes' names, in Slurm's order; none while
	// pending.
	Nodes []string
	// End is when the time limit runs out, by this machine's clock: the
	// time left squeue reported, added to when it was asked (the login
	// node's clock and time zone play no part). Zero without a limit or
	// before the job starts.
	End time.Time
}

// Live reports whether the job holds its nodes or may still get them.
func (j *Job) Live() bool { return slices.Contains(liveStates, j.State) }

// Running reports whether the job's nodes are allocated and usable.
func (j *Job) Running() bool { return j.State == StateRunning }

// TimeLeft is how long until End, from now; a negative duration once it
// has passed, and a very long one for a job without a limit.
func (j *Job) TimeLeft(now time.Time) time.Duration {
	if j.End.IsZero() {
		return time.Duration(1<<63 - 1)
	}
	return j.End.Sub(now)
}

// Cluster is a Slurm cluster seen from its login node.
type Cluster struct {
	login Runner
	// Poll is how often squeue is asked while waiting (DefaultPoll).
	Poll time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New returns the cluster whose login node login reaches.
func New(login Runner) *Cluster { return &Cluster{login: login, Poll: DefaultPoll, Now: time.Now} }

// Login names the login node, as messages name it.
func (c *Cluster) Login() string { return c.login.Name() }

func (c *Cluster) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// run runs one Slurm command line; its error names the login node and the
// command (what for says why it was run).
func (c *Cluster) run(ctx context.Context, what, cmd string) (string, error) {
	out, stderr, err := c.login.Run(ctx, cmd)
	if err != nil {
		if msg := strings.TrimSpace(string(stderr)); msg != "" && !strings.Contains(err.Error(), msg) {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return string(out), fmt.Errorf("slurm on %s: %s: `%s`: %w", c.login.Name(), what, cmd, err)
	}
	return string(out), nil
}

// squeueFormat is the fields Job reads, the name last since only it may
// hold the separator.
const squeueFormat = "%i|%T|%r|%L|%N|%j"

// grantedRE finds the job id in salloc's last words.
var grantedRE = regexp.MustCompile(`Granted job allocation (\d+)`)

// Allocate asks for an allocation with salloc --no-shell and waits in the
// queue until it runs, calling onState (which may be nil) with the job each
// time its state or pending reason changes. It returns the running job, its
// nodes and end time read.
//
// salloc blocks while the job pends; the job is followed by name with squeue
// meanwhile, so a link that drops during a long wait (which kills salloc on
// the login node, leaving the job queued) only pauses the following. When
// ctx ends first, the job this call submitted is cancelled before it
// returns: a campaign interrupted in the queue leaves no job behind.
func (c *Cluster) Allocate(ctx context.Context, req Request, onState func(Job)) (*Job, error) {
	if req.Name == "" {
		return nil, errors.New("slurm: a job name is needed to follow the job")
	}
	// Jobs of the same name that already exist (another campaign's, or one
	// a killed bakeoff left queued) are not ours to follow.
	before, err := c.byName(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, j := range before {
		known[j.ID] = true
	}
	cmd := req.Command()
	sctx, stopSalloc := context.WithCancel(ctx)
	defer stopSalloc()
	type sallocEnd struct {
		stderr string
		err    error
	}
	sallocDone := make(chan sallocEnd, 1)
	go func() {
		_, stderr, err := c.login.Run(sctx, cmd)
		sallocDone <- sallocEnd{string(stderr), err}
	}()

	var id string // the job salloc submitted, once seen
	var last Job
	var sallocErr error
	sallocOver := false
	cancelOurs := func() {
		stopSalloc()
		// salloc dies with its session; the job it queued does not.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultReleaseWait)
		defer cancel()
		ids := []string{}
		if id != "" {
			ids = append(ids, id)
		}
		if jobs, err := c.byName(rctx, req.Name); err == nil {
			for _, j := range jobs {
				if !known[j.ID] && j.ID != id {
					ids = append(ids, j.ID)
				}
			}
		}
		for _, x := range ids {
			_ = c.Release(rctx, x)
		}
	}
	tick := time.NewTicker(c.poll())
	defer tick.Stop()
	for {
		if id == "" {
			jobs, err := c.byName(ctx, req.Name)
			if err != nil && ctx.Err() == nil && sallocOver && sallocErr != nil {
				return nil, sallocErr
			}
			for _, j := range jobs {
				if !known[j.ID] && (id == "" || jobNum(j.ID) > jobNum(id)) {
					id = j.ID
				}
			}
		}
		if id != "" {
			j, err := c.Job(ctx, id)
			switch {
			case err == nil:
				if j.State != last.State || j.Reason != last.Reason {
					last = *j
					if onState != nil {
						onState(*j)
					}
				}
				if j.Running() {
					return j, nil
				}
				if !j.Live() {
					return nil, fmt.Errorf("slurm on %s: job %s ended %s while waiting for its nodes (reason: %s)",
						c.login.Name(), id, j.State, j.Reason)
				}
			case errors.Is(err, ErrGone):
				return nil, fmt.Errorf("slurm on %s: job %s vanished from the queue while waiting for its nodes", c.login.Name(), id)
			case ctx.Err() == nil:
				// A dropped link: the next poll reconnects.
			}
		} else if sallocOver {
			// salloc ended and no job of ours exists: it was refused.
			if sallocErr != nil {
				return nil, sallocErr
			}
			return nil, fmt.Errorf("slurm on %s: `%s` ended without a job", c.login.Name(), cmd)
		}
		select {
		case <-ctx.Done():
			cancelOurs()
			return nil, fmt.Errorf("slurm on %s: waiting for an allocation: %w", c.login.Name(), ctx.Err())
		case e := <-sallocDone:
			sallocOver = true
			if e.err != nil {
				sallocErr = fmt.Errorf("slurm on %s: asking for an allocation: `%s`: %w", c.login.Name(), cmd, e.err)
				if msg := strings.TrimSpace(e.stderr); msg != "" && !strings.Contains(e.err.Error(), msg) {
					sallocErr = fmt.Errorf("%w: %s", sallocErr, msg)
				}
			} else if m := grantedRE.FindStringSubmatch(e.stderr); m != nil && id == "" {
				id = m[1]
			}
		case <-tick.C:
		}
	}
}

func (c *Cluster) poll() time.Duration {
	if c.Poll <= 0 {
		return DefaultPoll
	}
	return c.Poll
}

// Command is the salloc command line that asks for r's allocation.
func (r Request) Command() string {
	return "salloc --no-shell " + strings.Join(quoteAll(r.args()), " ")
}

// ReleaseCommand is the command line that cancels job id.
func ReleaseCommand(id string) string { return "scancel " + id }

// args are salloc's options for r.
func (r Request) args() []string {
	a := []string{"--job-name=" + r.Name, "--nodes=" + strconv.Itoa(max(r.Nodes, 1))}
	if r.Time > 0 {
		a = append(a, "--time="+FormatTime(r.Time))
	}
	if r.Partition != "" {
		a = append(a, "--partition="+r.Partition)
	}
	if r.Account != "" {
		a = append(a, "--account="+r.Account)
	}
	if r.Gres != "" {
		a = append(a, "--gres="+r.Gres)
	}
	if r.NoKill {
		a = append(a, "--no-kill")
	}
	return a
}

// byName lists this user's jobs named name, in any state squeue still
// shows.
func (c *Cluster) byName(ctx context.Context, name string) ([]Job, error) {
	cmd := "squeue -h --me -t all -n " + quote(name) + " -o " + quote(squeueFormat)
	out, err := c.run(ctx, "listing jobs named "+name, cmd)
	if err != nil {
		return nil, err
	}
	return parseSqueue(out, c.now())
}

// Job reads a job's state, reason, nodes and end. A job the controller no
// longer knows is an error wrapping ErrGone.
func (c *Cluster) Job(ctx context.Context, id string) (*Job, error) {
	if !validID(id) {
		return nil, fmt.Errorf("slurm: %q is not a job id", id)
	}
	cmd := "squeue -h -t all -j " + id + " -o " + quote(squeueFormat)
	asked := c.now()
	out, err := c.run(ctx, "reading job "+id, cmd)
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return nil, fmt.Errorf("slurm on %s: job %s: %w", c.login.Name(), id, ErrGone)
		}
		return nil, err
	}
	jobs, err := parseSqueue(out, asked)
	if err != nil {
		return nil, fmt.Errorf("slurm on %s: reading job %s: %w", c.login.Name(), id, err)
	}
	i := slices.IndexFunc(jobs, func(j Job) bool { return j.ID == id })
	if i < 0 {
		return nil, fmt.Errorf("slurm on %s: job %s: %w", c.login.Name(), id, ErrGone)
	}
	j := jobs[i]
	if len(j.Nodes) == 1 && strings.ContainsAny(j.Nodes[0], "[,") {
		if j.Nodes, err = c.Hostnames(ctx, j.Nodes[0]); err != nil {
			return nil, err
		}
	}
	return &j, nil
}

// Hostnames expands a node list ("gpu[01-03],cpu7") into names, in order,
// with scontrol show hostnames.
func (c *Cluster) Hostnames(ctx context.Context, list string) ([]string, error) {
	out, err := c.run(ctx, "expanding node list "+list, "scontrol show hostnames "+quote(list))
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// NodeAddrs returns each node's NodeAddr (what the login node reaches it
// at), from sinfo; a node whose address is its name maps to its name.
func (c *Cluster) NodeAddrs(ctx context.Context, nodes []string) (map[string]string, error) {
	if len(nodes) == 0 {
		return map[string]string{}, nil
	}
	cmd := "sinfo -h -N -n " + quote(strings.Join(nodes, ",")) + " -o " + quote("%N|%o")
	out, err := c.run(ctx, "reading node addresses", cmd)
	if err != nil {
		return nil, err
	}
	addrs, err := parseNodeAddrs(out)
	if err != nil {
		return nil, fmt.Errorf("slurm on %s: `%s`: %w", c.login.Name(), cmd, err)
	}
	for _, n := range nodes {
		if _, ok := addrs[n]; !ok {
			return nil, fmt.Errorf("slurm on %s: `%s` does not list node %s", c.login.Name(), cmd, n)
		}
	}
	return addrs, nil
}

// Release cancels the job (scancel) and waits, up to DefaultReleaseWait or
// ctx, until it no longer holds its nodes. A job already ended or purged is
// released already.
func (c *Cluster) Release(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("slurm: %q is not a job id", id)
	}
	if _, err := c.run(ctx, "releasing job "+id, ReleaseCommand(id)); err != nil {
		msg := err.Error()
		if !strings.Contains(msg, "already completing or completed") && !strings.Contains(msg, "Invalid job id") {
			return err
		}
	}
	deadline := c.now().Add(DefaultReleaseWait)
	for {
		j, err := c.Job(ctx, id)
		if errors.Is(err, ErrGone) || (err == nil && !j.Live() && j.State != StateCompleting) {
			return nil
		}
		if err == nil && c.now().After(deadline) {
			return fmt.Errorf("slurm on %s: job %s still %s %s after scancel", c.login.Name(), id, j.State, DefaultReleaseWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurm on %s: waiting for job %s to end: %w", c.login.Name(), id, ctx.Err())
		case <-time.After(min(c.poll(), 500*time.Millisecond)):
		}
	}
}

// validID accepts plain job ids (digits); array and het job ids are not
// what salloc gives.
func validID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func jobNum(id string) int {
	n, _ := strconv.Atoi(id)
	return n
}

// quote makes s one word for sh.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(a []string) []string {
	out := make([]string, len(a))
	for i, s := range a {
		out[i] = quote(s)
	}
	return out
}
