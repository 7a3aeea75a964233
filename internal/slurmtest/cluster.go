// Package slurmtest starts a real Slurm cluster for end-to-end tests:
// munged with its own key and socket, slurmctld and slurmd from the
// machine's Slurm packages, in namespace hosts made by internal/testhost.
// The first host's sshd is the cluster's login address; it also runs the
// controller and the first compute node. Each further node (Options.Nodes)
// is a namespace host of its own, with its own host name, address, sshd
// and slurmd, joined to the first by a link of its own so that the
// controller reaches its slurmd and the login node reaches its sshd. A
// campaign reaches every node through the login connection as a jump host,
// as it reaches a cluster's nodes.
//
// The configuration files are written into a temporary directory; each
// node has a fake GPU count (gres gpu:N backed by character devices with
// /dev/null's numbers) so that `gres: gpu:N` allocations work. The daemons
// run under `unshare --uts --mount` with the controller's and node's host
// name set, since Slurm checks them against gethostname and `ip netns exec`
// does not change it, and with a private, empty /sys/fs/cgroup, so slurmd
// never touches this machine's cgroups. The nodes share munged's socket
// (a path, which network namespaces do not separate) and keep their spool,
// pid and log files apart by node name.
//
// Everything started is stopped in t.Cleanup, by pid, before the namespace
// hosts go. Without root or without the Slurm binaries, New skips the test
// and says why; .ci/run installs them.
package slurmtest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/testhost"
)

// Binaries the cluster needs, from Debian's slurmctld, slurmd, slurm-client
// and munge packages.
var binaries = []string{"munged", "slurmctld", "slurmd", "salloc", "squeue", "scontrol", "scancel", "sinfo", "unshare"}

// Partition is the cluster's one partition.
const Partition = "gpu"

// startTimeout bounds each readiness wait: munge's socket, the controller's
// answer, the node's registration. A busy machine only makes them slower.
const startTimeout = 60 * time.Second

// stopTimeout is how long a daemon has to exit after SIGTERM before SIGKILL.
const stopTimeout = 15 * time.Second

// Cluster is a running Slurm cluster. Its fields are read-only.
type Cluster struct {
	// Host is the login host: its Alias is the login node's ssh alias
	// (Home holds the config and known_hosts for every node), and it runs
	// the controller and the first node.
	Host *testhost.Host
	// Node is the first node's Slurm name; NodeAddr its address (the login
	// host's IP).
	Node     string
	NodeAddr string
	// Nodes are every compute node, the first one first.
	Nodes []*Node
	// GPUs is each node's gres gpu count.
	GPUs int
	// Dir holds slurm.conf, gres.conf, cgroup.conf, munge's key and socket,
	// the daemons' state, spools and logs.
	Dir string
	// Conf is slurm.conf: SLURM_CONF in every SSH session on the hosts.
	Conf string

	t       testing.TB
	opt     Options
	daemons []*daemon
}

// Node is one compute node.
type Node struct {
	// Name is its Slurm name and host name; Addr its NodeAddr.
	Name string
	Addr string
	// Host is the namespace host it runs in: the login host for the first
	// node, one of its own for each other.
	Host *testhost.Host
	// link names the ends of the link from the login host into Host, none
	// for the first node.
	link struct{ login, node string }
}

// Options change how New builds a cluster.
type Options struct {
	// Nodes is how many compute nodes (default 1).
	Nodes int
	// GPUs is each node's gres gpu count (default 8).
	GPUs int
	// SlurmdTimeout is how long the controller waits for a silent node
	// before it sets it DOWN (Slurm's default, 300 s, when zero).
	SlurmdTimeout time.Duration
	// HostOptions are passed on to testhost.New for every host (e.g.
	// WithNvidiaSMI).
	HostOptions []testhost.Option
}

// daemon is one process the harness started.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// New starts a cluster and registers its teardown. It skips the test when
// this machine cannot run one.
func New(t testing.TB, o Options) *Cluster {
	t.Helper()
	if reason := unsupported(); reason != "" {
		t.Skipf("slurmtest: %s", reason)
	}
	o.GPUs = cmp.Or(o.GPUs, 8)
	o.Nodes = max(o.Nodes, 1)
	dir := t.TempDir()
	c := &Cluster{GPUs: o.GPUs, Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), t: t, opt: o}
	hopts := append([]testhost.Option{testhost.WithEnv("SLURM_CONF", c.Conf)}, o.HostOptions...)
	c.Host = testhost.New(t, hopts...)
	c.Nodes = append(c.Nodes, &Node{Name: nodeName(c.Host), Addr: c.Host.IP, Host: c.Host})
	ctx := context.Background()
	for range o.Nodes - 1 {
		h := testhost.New(t, hopts...)
		n := &Node{Name: nodeName(h), Addr: h.IP, Host: h}
		if err := c.join(ctx, n); err != nil {
			t.Fatalf("slurmtest: %v", err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	c.Node, c.NodeAddr = c.Nodes[0].Name, c.Nodes[0].Addr
	// Registered after every testhost.New, so it runs before the hosts'
	// own teardowns: the daemons are stopped by pid, then the namespaces
	// go.
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("slurmtest: %v", err)
		}
	})
	if err := c.start(); err != nil {
		t.Fatalf("slurmtest: %v\n%s", err, c.Logs())
	}
	return c
}

// nodeName is the Slurm name of the node on h: the namespace's random
// suffix keeps node names apart in messages.
func nodeName(h *testhost.Host) string { return "node-" + h.Name[len(h.Name)-6:] }

// join links node n's host to the login host, a point-to-point link that
// carries each host's own address (so the controller reaches the node's
// slurmd, the node the controller, and the login node the node's sshd),
// and lets the login host's SSH client config reach n by its name, as a
// user's ~/.ssh/config would name a cluster's nodes: its key, and its host
// key in known_hosts.
func (c *Cluster) join(ctx context.Context, n *Node) error {
	id := n.Host.Name[len(n.Host.Name)-6:]
	n.link.login, n.link.node = "bs"+id+"l", "bs"+id+"n"
	steps := [][]string{
		{"link", "add", n.link.login, "netns", c.Host.Name, "type", "veth", "peer", "name", n.link.node, "netns", n.Host.Name},
		{"-n", c.Host.Name, "link", "set", n.link.login, "up"},
		{"-n", n.Host.Name, "link", "set", n.link.node, "up"},
		{"-n", c.Host.Name, "route", "add", n.Addr + "/32", "dev", n.link.login, "src", c.Host.IP},
		{"-n", n.Host.Name, "route", "add", c.Host.IP + "/32", "dev", n.link.node, "src", n.Addr},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, "ip", s...).CombinedOutput(); err != nil {
			return fmt.Errorf("linking node %s to the login host: ip %s: %w: %s", n.Name, strings.Join(s, " "), err, bytes.TrimSpace(out))
		}
	}
	// The node's alias and host key, then its name with the node's own
	// client key: sshd on each host knows only that host's key.
	if err := n.Host.AddToHome(c.Host.Home); err != nil {
		return err
	}
	f, err := os.OpenFile(c.Host.SSHConfig, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "\nHost %s\n  IdentityFile %s\n  IdentitiesOnly yes\n", n.Name, n.Host.KeyFile)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("naming node %s in the login host's ssh config: %w", n.Name, err)
	}
	return nil
}

// CutNode cuts node name off, as a node that dies: its link to the login
// host and its own link go down, so the controller, the login node and
// this machine all lose it without being told. The first node shares the
// login host and cannot be cut.
func (c *Cluster) CutNode(name string) {
	c.t.Helper()
	i := slices.IndexFunc(c.Nodes, func(n *Node) bool { return n.Name == name })
	if i < 1 {
		c.t.Fatalf("slurmtest: %s is not a node that can be cut (nodes: %v)", name, c.nodeNames())
	}
	n := c.Nodes[i]
	if out, err := exec.Command("ip", "-n", n.Host.Name, "link", "set", n.link.node, "down").CombinedOutput(); err != nil {
		c.t.Fatalf("slurmtest: cutting node %s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	n.Host.LinkDown()
}

// JobNodes are the nodes job id holds, as squeue lists them: a node that
// Slurm set DOWN leaves a --no-kill job's list (and no other job's, which
// ends).
func (c *Cluster) JobNodes(ctx context.Context, id string) ([]string, error) {
	out, err := c.Exec(ctx, "squeue", "-h", "-t", "all", "-j", id, "-o", "%N")
	if err != nil {
		return nil, err
	}
	list := strings.TrimSpace(string(out))
	if list == "" {
		return nil, nil
	}
	out, err = c.Exec(ctx, "scontrol", "show", "hostnames", list)
	return strings.Fields(string(out)), err
}

func (c *Cluster) nodeNames() []string {
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	return names
}

// unsupported says why this machine cannot run a cluster, "" when it can.
func unsupported() string {
	if os.Geteuid() != 0 {
		return "a Slurm cluster in a network namespace needs root; run the tests as root (CI does)"
	}
	var missing []string
	for _, b := range binaries {
		if _, err := exec.LookPath(b); err != nil {
			if _, err := os.Stat(filepath.Join("/usr/sbin", b)); err != nil {
				missing = append(missing, b)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("%s not installed (apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)", strings.Join(missing, ", "))
	}
	return ""
}

func (c *Cluster) start() error {
	if err := c.writeFiles(); err != nil {
		return err
	}
	ctx := context.Background()
	sock := filepath.Join(c.Dir, "munge", "munge.sock")
	if err := c.spawn(c.Host, "munged", nil, "munged", "--foreground", "--force",
		"--socket="+sock, "--key-file="+filepath.Join(c.Dir, "munge", "munge.key"),
		"--pid-file="+filepath.Join(c.Dir, "munge", "munged.pid"),
		"--seed-file="+filepath.Join(c.Dir, "munge", "munged.seed"),
		"--log-file="+filepath.Join(c.Dir, "munge", "munged.log")); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "munged's socket", func() error {
		_, err := os.Stat(sock)
		return err
	}); err != nil {
		return err
	}
	if err := c.spawn(c.Host, "slurmctld", []string{"hostname " + c.Node}, "slurmctld", "-D", "-f", c.Conf); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "slurmctld to answer", func() error {
		out, err := c.Exec(ctx, "scontrol", "ping")
		if err != nil || !bytes.Contains(out, []byte("is UP")) {
			return fmt.Errorf("scontrol ping: %v: %s", err, bytes.TrimSpace(out))
		}
		return nil
	}); err != nil {
		return err
	}
	// Each node's cgroup directory is an empty tmpfs in its own mount
	// namespace: Slurm's cgroup/v1 plugin loads, and nothing touches the
	// machine's real cgroups.
	for _, n := range c.Nodes {
		if err := c.spawn(n.Host, "slurmd-"+n.Name, []string{"hostname " + n.Name, "mount -t tmpfs bakeoff-slurmtest /sys/fs/cgroup"},
			"slurmd", "-D", "-f", c.Conf, "-N", n.Name); err != nil {
			return err
		}
	}
	return c.waitFor(ctx, "the nodes to be idle", func() error {
		for _, n := range c.Nodes {
			out, err := c.Exec(ctx, "sinfo", "-h", "-N", "-n", n.Name, "-o", "%T")
			if s := strings.TrimSpace(string(out)); err != nil || s != "idle" {
				return fmt.Errorf("node %s is %q (%v)", n.Name, s, err)
			}
		}
		return nil
	})
}

// spawn starts one daemon in h's namespace, in its own UTS and mount
// namespaces, after the setup commands (run by sh). Every step execs the
// next, so the pid held is the daemon's own.
func (c *Cluster) spawn(h *testhost.Host, name string, setup []string, argv ...string) error {
	script := strings.Join(append(setup, `exec "$@"`), " && ")
	args := append([]string{"netns", "exec", h.Name, "unshare", "--uts", "--mount", "sh", "-c", script, "sh"}, argv...)
	logPath := filepath.Join(c.Dir, name+".out")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	defer log.Close()
	cmd := exec.Command("ip", args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { cmd.Wait(); close(d.done) }()
	c.daemons = append(c.daemons, d)
	return nil
}

// waitFor polls check until it succeeds, a daemon dies, or startTimeout.
func (c *Cluster) waitFor(ctx context.Context, what string, check func() error) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		for _, d := range c.daemons {
			select {
			case <-d.done:
				return fmt.Errorf("waiting for %s: %s exited (%v)", what, d.name, d.cmd.ProcessState)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not within %s: %v", what, startTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Exec runs a Slurm command inside the host's namespace with SLURM_CONF set
// (not through SSH), for tests to look at the cluster from outside bakeoff.
func (c *Cluster) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", c.Host.Name, name}, args...)...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// Jobs lists the cluster's jobs that are not finished (pending, running,
// completing...), as "ID NAME STATE" lines; a cluster nothing was left
// behind on has none.
func (c *Cluster) Jobs(ctx context.Context) ([]string, error) {
	out, err := c.Exec(ctx, "squeue", "-h", "-o", "%i %j %T")
	if err != nil {
		return nil, err
	}
	var jobs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			jobs = append(jobs, l)
		}
	}
	return jobs, nil
}

// JobState is a job's state as squeue shows it ("RUNNING", "CANCELLED"...),
// "" once the controller has forgotten it.
func (c *Cluster) JobState(ctx context.Context, id string) (string, error) {
	out, err := c.Exec(ctx, "squeue", "-h", "-t", "all", "-j", id, "-o", "%T")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Pids are the daemons' pids, for tests that tell them apart from what a
// campaign left on the host.
func (c *Cluster) Pids() map[int]string {
	m := map[int]string{}
	for _, d := range c.daemons {
		if d.cmd.Process != nil {
			m[d.cmd.Process.Pid] = d.name
		}
	}
	return m
}

// Logs returns the end of each daemon's log, for a failing test to show.
func (c *Cluster) Logs() string {
	files := []string{"munged.out", "slurmctld.log", "slurmctld.out"}
	for _, n := range c.Nodes {
		files = append(files, "slurmd-"+n.Name+".log", "slurmd-"+n.Name+".out")
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(c.Dir, f))
		if err != nil {
			continue
		}
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, data)
	}
	return b.String()
}

// stop ends the daemons in reverse order of their start: SIGTERM by pid,
// then SIGKILL after stopTimeout. slurmctld's helper (slurmscriptd) exits
// with it; a daemon's children are in its process group.
func (c *Cluster) stop() error {
	var errs []error
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		select {
		case <-d.done:
			continue
		default:
		}
		pid := d.cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("stopping %s (pid %d): %w", d.name, pid, err))
		}
		select {
		case <-d.done:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-d.done
			errs = append(errs, fmt.Errorf("%s (pid %d) did not exit within %s of SIGTERM; killed", d.name, pid, stopTimeout))
		}
		// Helpers the daemon forked (slurmscriptd) share its group.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	return errors.Join(errs...)
}

// writeFiles writes munge's key, the fake GPU devices and Slurm's configs.
func (c *Cluster) writeFiles() error {
	dirs := []string{"munge", "state", "dev"}
	for _, n := range c.Nodes {
		dirs = append(dirs, "spool-"+n.Name)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return err
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "munge", "munge.key"), key, 0o600); err != nil {
		return fmt.Errorf("writing munge key: %w", err)
	}
	// Slurm wants a GPU's File to be a device; /dev/null's numbers make one
	// that nothing ever opens.
	for i := range c.GPUs {
		p := filepath.Join(c.Dir, "dev", fmt.Sprintf("gpu%d", i))
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o600, int(1<<8|3)); err != nil {
			return fmt.Errorf("making fake GPU device %s: %w", p, err)
		}
	}
	plugins := ""
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/aarch64-linux-gnu/slurm-wlm", "/usr/lib/slurm-wlm", "/usr/lib64/slurm"} {
		if _, err := os.Stat(dir); err == nil {
			plugins = "PluginDir=" + dir + "\n"
			break
		}
	}
	var nodes, gres strings.Builder
	for _, n := range c.Nodes {
		fmt.Fprintf(&nodes, "NodeName=%s NodeAddr=%s CPUs=2 RealMemory=1000 Gres=gpu:%d State=UNKNOWN\n", n.Name, n.Addr, c.GPUs)
		fmt.Fprintf(&gres, "NodeName=%s Name=gpu File=%s/dev/gpu[0-%d]\n", n.Name, c.Dir, c.GPUs-1)
	}
	if c.opt.SlurmdTimeout > 0 {
		plugins += fmt.Sprintf("SlurmdTimeout=%d\n", int(c.opt.SlurmdTimeout.Seconds()))
	}
	conf := fmt.Sprintf(slurmConf, c.Node, c.NodeAddr, c.Dir, strings.Join(c.nodeNames(), ","), Partition, plugins, nodes.String())
	files := map[string]string{
		"slurm.conf":  conf,
		"gres.conf":   gres.String(),
		"cgroup.conf": "CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(c.Dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// slurmConf is the whole cluster: one controller, its nodes, one
// partition, no accounting, root as the Slurm user (the tests run as root).
// A node's spool, pid and log files carry its name (%%n), since every node
// reads this one file.
const slurmConf = `# written by internal/slurmtest
ClusterName=bakeoff-test
SlurmctldHost=%[1]s(%[2]s)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=%[3]s/munge/munge.sock
CredType=cred/munge
StateSaveLocation=%[3]s/state
SlurmdSpoolDir=%[3]s/spool-%%n
SlurmctldPidFile=%[3]s/slurmctld.pid
SlurmdPidFile=%[3]s/slurmd-%%n.pid
SlurmctldLogFile=%[3]s/slurmctld.log
SlurmdLogFile=%[3]s/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MinJobAge=300
%[6]s%[7]sPartitionName=%[5]s Nodes=%[4]s Default=YES MaxTime=INFINITE State=UP
`

// procAlive reports whether pid is a live process (not a zombie).
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
