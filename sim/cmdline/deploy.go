package cmdline

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// The deployment a server is one process of: a rank of a tensor-parallel
// group spread over several nodes (ranks.go), and a prefill or decode worker
// of a disaggregated deployment behind a router (disagg.go, router.go). The
// flags are SGLang's (python/sglang/srt/server_args.py, ServerArgs: the
// "Distributed topology" and "PD disaggregation" sections).

// Disaggregation modes, SGLang's --disaggregation-mode choices ("null" is
// no disaggregation).
const (
	DisaggNull    = "null"
	DisaggPrefill = "prefill"
	DisaggDecode  = "decode"
)

const (
	// DefaultBootstrapPort is SGLang's --disaggregation-bootstrap-port: where
	// a prefill worker's bootstrap server listens for its decode peers.
	DefaultBootstrapPort = 8998
	// DefaultWatchdogTimeout is SGLang's --watchdog-timeout: how long a
	// scheduler may be stuck (a forward, a collective) before its watchdog
	// ends the server. Simulated time: it passes --sim-speed times faster.
	DefaultWatchdogTimeout = 300 * time.Second
)

// Deployment is where a server stands in a deployment of several processes.
type Deployment struct {
	// NNodes and NodeRank are --nnodes and --node-rank: the tensor-parallel
	// group's TP ranks are split evenly over NNodes nodes, node r holding
	// ranks r·tp/nnodes to (r+1)·tp/nnodes − 1, as SGLang's
	// _launch_scheduler_processes does. Rank 0 serves the API.
	NNodes   int
	NodeRank int
	// DistInitAddr is --dist-init-addr (HOST:PORT): node 0 listens there and
	// the other nodes join it before anything loads.
	DistInitAddr string
	// DistTimeout is --dist-timeout: how long node 0 waits for the others to
	// join (simulated time; 0 waits until stopped).
	DistTimeout time.Duration
	// WatchdogTimeout is --watchdog-timeout (simulated time): how long a rank
	// whose peer died stays stuck in its collective before the scheduler's
	// watchdog ends the server.
	WatchdogTimeout time.Duration
	// WatchdogGiven says --watchdog-timeout was given: the watchdog's log
	// line then prints the float argparse parsed ("5.0"), else SGLang's int
	// default ("300").
	WatchdogGiven bool

	// Disagg is --disaggregation-mode: DisaggNull, DisaggPrefill or
	// DisaggDecode.
	Disagg string
	// BootstrapPort is --disaggregation-bootstrap-port: a prefill worker's
	// bootstrap server, which its decode peers ask for a request's KV cache.
	BootstrapPort int
}

// defaultDeployment is a single-node server without disaggregation.
func defaultDeployment() Deployment {
	return Deployment{NNodes: 1, WatchdogTimeout: DefaultWatchdogTimeout, Disagg: DisaggNull, BootstrapPort: DefaultBootstrapPort}
}

// MultiNode reports whether the tensor-parallel group spans several nodes.
func (d Deployment) MultiNode() bool { return d.NNodes > 1 }

// Leader reports whether this process serves the API: node rank 0.
func (d Deployment) Leader() bool { return d.NodeRank == 0 }

// Prefill and Decode report the disaggregated roles.
func (d Deployment) Prefill() bool { return d.Disagg == DisaggPrefill }
func (d Deployment) Decode() bool  { return d.Disagg == DisaggDecode }

// NodeTP is how many TP ranks run on this node: tp / nnodes.
func (c *Config) NodeTP() int { return c.TP / max(1, c.Deploy.NNodes) }

// NodeRanks are the TP ranks this node runs.
func (c *Config) NodeRanks() []int {
	per := c.NodeTP()
	out := make([]int, per)
	for i := range out {
		out[i] = c.Deploy.NodeRank*per + i
	}
	return out
}

// checkDeployment refuses a multi-node command line that cannot form a
// group. SGLang splits tp // nnodes ranks per node and, without
// --dist-init-addr, rendezvouses on the local host; both would leave the
// group waiting for ranks that never come, so the sim refuses them at once
// in argparse's words.
func checkDeployment(c *Config) error {
	d := c.Deploy
	switch {
	case d.NNodes < 1:
		return &ArgError{fmt.Sprintf("argument --nnodes: invalid value: %d", d.NNodes)}
	case d.NodeRank < 0 || d.NodeRank >= d.NNodes:
		return &ArgError{fmt.Sprintf("argument --node-rank: %d is not below --nnodes %d", d.NodeRank, d.NNodes)}
	case !d.MultiNode():
		return nil
	case c.TP%d.NNodes != 0:
		return &ArgError{fmt.Sprintf("argument --tp-size/--tensor-parallel-size: %d ranks do not split evenly over --nnodes %d", c.TP, d.NNodes)}
	case d.DistInitAddr == "":
		return &ArgError{fmt.Sprintf("argument --dist-init-addr/--nccl-init-addr: required with --nnodes %d (node 0's HOST:PORT)", d.NNodes)}
	}
	if _, port, err := net.SplitHostPort(d.DistInitAddr); err != nil {
		return &ArgError{fmt.Sprintf("argument --dist-init-addr/--nccl-init-addr: invalid value: '%s' (HOST:PORT)", d.DistInitAddr)}
	} else if _, err := strconv.Atoi(port); err != nil {
		return &ArgError{fmt.Sprintf("argument --dist-init-addr/--nccl-init-addr: invalid port: '%s'", port)}
	}
	return nil
}

// WatchdogRepr is the watchdog timeout as SGLang's watchdog prints it.
func (d Deployment) WatchdogRepr() string {
	if !d.WatchdogGiven {
		return strconv.Itoa(int(DefaultWatchdogTimeout.Seconds()))
	}
	return pySeconds(d.WatchdogTimeout)
}

// pySeconds prints seconds as Python prints a float: the shortest repr,
// with ".0" when it is whole.
func pySeconds(d time.Duration) string {
	s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	for _, r := range s {
		if r == '.' {
			return s
		}
	}
	return s + ".0"
}
