package model

import (
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
)

// The latency side of the model in simulated time, for an aggregated server
// and for a disaggregated pair: what a client sees of each request (its time
// to first token and the gaps between its tokens) under a closed-loop load.
// The disaggregation test and docs/SIM.md's table read the trade-off here;
// the servers play the same schedulers in wall time.

// LatencyResult is what the clients of a virtual run saw, in simulated time.
type LatencyResult struct {
	// TTFT is each request's time to first token; ITL each gap between two
	// of a request's chunks, spread over the chunk's tokens.
	TTFT, ITL []time.Duration
	// Throughput is output tokens per simulated second over the steady
	// state (until the last request is sent).
	Throughput float64
}

// LatencyLoad is a closed-loop load for the latency runs: Concurrency
// clients each send their next request as soon as the previous one ends,
// Requests in all, each with a prompt of PromptTokens tokens and its own
// output length, drawn from Seed uniformly in [OutputTokens/2,
// 3·OutputTokens/2]. Real requests end at different times; with one length
// for all, a closed loop's requests would start and end together, and no
// prefill would ever land among running decodes.
type LatencyLoad struct {
	Concurrency, Requests      int
	PromptTokens, OutputTokens int
	Seed                       uint64
}

// outputs draws each request's output length.
func (l LatencyLoad) outputs() []int {
	rng := rand.New(rand.NewPCG(l.Seed, l.Seed^0x0a7))
	out := make([]int, l.Requests)
	lo := max(1, l.OutputTokens/2)
	for i := range out {
		out[i] = lo + rng.IntN(max(1, l.OutputTokens+1))
	}
	return out
}

// Quantile is the q-quantile (nearest rank) of durations, 0 when empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	i := min(len(s)-1, max(0, int(q*float64(len(s))+0.5)-1))
	return s[i]
}

// RunVirtualLatency runs the closed loop against one aggregated server.
func RunVirtualLatency(cfg *cmdline.Config, load LatencyLoad) LatencyResult {
	return runVirtualNodes(newVNode(cfg, load.Seed), nil, load)
}

// RunVirtualDisagg runs the closed loop against a prefill worker and a
// decode worker: each request is prefilled on the first, its KV cache moves
// (KVTransferTime), and the second decodes it and answers the client.
func RunVirtualDisagg(prefill, decode *cmdline.Config, load LatencyLoad) LatencyResult {
	return runVirtualNodes(newVNode(prefill, load.Seed), newVNode(decode, load.Seed^0xdec0de), load)
}

// vArrival is a request reaching a server at a simulated time.
type vArrival struct {
	at  time.Duration
	job *Job
}

// vNode is one server of a virtual run: its scheduler, when its current
// step ends, and the requests still on their way to it.
type vNode struct {
	s     *Scheduler
	free  time.Duration
	inbox []vArrival // in time order
}

func newVNode(cfg *cmdline.Config, seed uint64) *vNode {
	maxRun, _ := cfg.RunningCap()
	return &vNode{s: NewScheduler(NewPerf(cfg), maxRun, cfg.ChunkedPrefillSize, rand.New(rand.NewPCG(seed, seed^0x1a7e)))}
}

// send puts a request on its way, arriving at at.
func (n *vNode) send(at time.Duration, j *Job) {
	// After those arriving at the same time: first come, first queued.
	i := sort.Search(len(n.inbox), func(k int) bool { return n.inbox[k].at > at })
	n.inbox = slices.Insert(n.inbox, i, vArrival{at, j})
}

// next is when the node can start its next step, and whether it has one.
func (n *vNode) next() (time.Duration, bool) {
	switch {
	case !n.s.Idle():
		return n.free, true
	case len(n.inbox) > 0:
		return max(n.free, n.inbox[0].at), true
	}
	return 0, false
}

// vRequest is one client request of a virtual run.
type vRequest struct {
	sent, last time.Duration
	first      bool // its first token has arrived
}

// runVirtualNodes plays the load: requests enter at entry; with a decode
// node, entry only prefills and the decode node answers, else entry does
// both. Nodes step in simulated-time order.
func runVirtualNodes(entry, decode *vNode, load LatencyLoad) LatencyResult {
	outputs := load.outputs()
	var (
		res       LatencyResult
		reqs      = map[*Job]*vRequest{}
		sent      int
		lastSend  time.Duration
		steadyTok int
	)
	answer := entry
	if decode != nil {
		answer = decode
	}
	submit := func(at time.Duration) {
		j := &Job{ID: uint64(sent), PromptTokens: load.PromptTokens, Target: outputs[sent]}
		if decode != nil {
			j.Target = 1 // the prefill worker's part: the first token
		}
		reqs[j] = &vRequest{sent: at}
		entry.send(at, j)
		lastSend = at
		sent++
	}
	for sent < min(load.Concurrency, load.Requests) {
		submit(0)
	}
	nodes := []*vNode{entry}
	if decode != nil {
		nodes = append(nodes, decode)
	}
	for {
		var n *vNode
		var at time.Duration
		for _, c := range nodes {
			if t, ok := c.next(); ok && (n == nil || t < at) {
				n, at = c, t
			}
		}
		if n == nil {
			break
		}
		for len(n.inbox) > 0 && n.inbox[0].at <= at {
			n.s.Add(n.inbox[0].job)
			n.inbox = n.inbox[1:]
		}
		r := n.s.Step()
		end := at + r.Duration
		n.free = end
		for _, e := range r.Emits {
			if n != answer {
				// A prefilled request: its KV cache moves to the decode
				// worker, where it starts over as a request to decode.
				if e.Done {
					d := &Job{ID: e.Job.ID, PromptTokens: e.Job.PromptTokens, Target: outputs[e.Job.ID]}
					reqs[d] = reqs[e.Job]
					delete(reqs, e.Job)
					decode.send(end+KVTransferTime(e.Job.PromptTokens), d)
				}
				continue
			}
			q := reqs[e.Job]
			if !q.first {
				q.first = true
				res.TTFT = append(res.TTFT, end-q.sent)
			} else if e.Tokens > 0 {
				gap := (end - q.last) / time.Duration(e.Tokens)
				for range e.Tokens {
					res.ITL = append(res.ITL, gap)
				}
			}
			q.last = end
			if sent < load.Requests || end <= lastSend {
				steadyTok += e.Tokens
			}
			if e.Done {
				delete(reqs, e.Job)
				if sent < load.Requests {
					submit(end)
				}
			}
		}
	}
	if lastSend > 0 {
		res.Throughput = float64(steadyTok) / lastSend.Seconds()
	}
	return res
}

// The KV transfer, in simulated time. SGLang moves a request's KV cache with
// Mooncake or NIXL over RDMA, each decode rank pulling from a prefill rank in
// parallel. For the modelled model (Kimi-K2.5: DeepSeek-V3's MLA, whose
// compressed KV every TP rank holds whole), a token's KV is 61 layers × (512
// latent + 64 rope) values × 2 bytes. The bandwidth is one 400 Gb/s NIC per
// GPU at 80%; the fixed part stands for the bootstrap handshake and the
// transfer's polling by both schedulers. docs/SIM.md, Disaggregation, checks
// what they give against a published measurement.
const (
	kvBytesPerToken     = 61 * (512 + 64) * 2
	kvTransferBandwidth = 40e9 // bytes per simulated second
	kvTransferFixed     = 5 * time.Millisecond
)

// KVTransferTime is the simulated time to move the KV cache of a prompt of
// promptTokens tokens from a prefill worker to a decode worker.
func KVTransferTime(promptTokens int) time.Duration {
	return kvTransferFixed + time.Duration(float64(promptTokens)*kvBytesPerToken/kvTransferBandwidth*float64(time.Second))
}
