package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/pause"
	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/server"
	"github.com/bakeoff-dev/bakeoff/sim/sglog"
)

// Multi-node tensor parallelism, as SGLang runs it (python/sglang/srt/
// entrypoints/engine.py, _launch_subprocesses): every node starts the
// schedulers of its own TP ranks, which form one torch.distributed group at
// --dist-init-addr, where node 0 hosts the store and the others connect. Node
// 0 then serves the API; a node of rank ≥ 1 waits for its schedulers to be
// ready and serves only a dummy health check (python/sglang/srt/utils/
// common.py, launch_dummy_health_check_server: /health, /health_generate and
// /ping answer 200) on its own --host and --port.
//
// The sim plays the store with one TCP link from each node to node 0, kept
// open for the group's life: a link that closes is a peer that died. Its
// survivors then do what ranks stuck in a collective with a dead peer do: they
// hang (node 0 stops stepping and answers 503), until SGLang's scheduler
// watchdog (--watchdog-timeout, python/sglang/srt/utils/watchdog.py) logs
// "Scheduler watchdog timeout" and the server ends with NCCL's error for a
// remote that exited (pynccl_wrapper.py's NCCL_CHECK: "NCCL error: remote
// process exited or there was a network error") and "Received sigquit from
// a child process".

const (
	// joinRetry is how often (wall time) a node retries node 0's address
	// while it is not yet listening, as torch's store client retries.
	joinRetry = 100 * time.Millisecond
	// joinHandshakeTimeout bounds (wall time) the wait for a joining node's
	// hello once its connection is up.
	joinHandshakeTimeout = 10 * time.Second
	// ncclRemoteError is NCCL's text for ncclRemoteError, which SGLang's
	// pynccl wrapper raises as "NCCL error: …".
	ncclRemoteError = "remote process exited or there was a network error"
)

// errPeerLost ends a server whose group lost a node.
var errPeerLost = errors.New("NCCL error: " + ncclRemoteError)

// joinHello is what a node sends node 0 when it joins.
type joinHello struct {
	NodeRank int    `json:"node_rank"`
	NNodes   int    `json:"nnodes"`
	TP       int    `json:"tp_size"`
	PID      int    `json:"pid"`
	Host     string `json:"host"`
}

// joinReply is node 0's answer once every node has joined, or at once when
// the joining node does not belong in the group.
type joinReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// peerGroup is this node's links to the rest of its group.
type peerGroup struct {
	cfg *cmdline.Config
	log *sglog.Logger
	now func() time.Time
	pid int

	mu      sync.Mutex
	conns   []net.Conn
	lost    chan peer     // the first peer whose link closed
	crashed chan struct{} // closed once the watchdog has ended the server
	closing atomic.Bool   // this node is leaving: closed links are not deaths
}

func newPeerGroup(cfg *cmdline.Config, log *sglog.Logger, now func() time.Time, pid int) *peerGroup {
	return &peerGroup{cfg: cfg, log: log, now: now, pid: pid, lost: make(chan peer, 1), crashed: make(chan struct{})}
}

// peer is another node of the group: its node rank and the address of its
// end of the link.
type peer struct {
	rank int
	addr net.Addr
}

// ncclAddr is the peer's address as NCCL prints one: host<port>.
func (p peer) ncclAddr() string {
	host, port, err := net.SplitHostPort(p.addr.String())
	if err != nil {
		return p.addr.String()
	}
	return host + "<" + port + ">"
}

// Crashed is closed when a peer's death has ended this node (nil group:
// never).
func (g *peerGroup) Crashed() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.crashed
}

// hasCrashed reports whether Crashed is closed.
func (g *peerGroup) hasCrashed() bool {
	select {
	case <-g.Crashed():
		return g != nil
	default:
		return false
	}
}

// Close drops the links as this node leaves: the peers see it die.
func (g *peerGroup) Close() {
	if g == nil {
		return
	}
	g.closing.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
}

// keep holds a link for the group's life; its closing is a peer's death.
func (g *peerGroup) keep(conn net.Conn, p peer) {
	g.mu.Lock()
	g.conns = append(g.conns, conn)
	g.mu.Unlock()
	go func() {
		io.Copy(io.Discard, conn)
		if !g.closing.Load() {
			select {
			case g.lost <- p:
			default:
			}
		}
	}()
}

// sim is a simulated duration in wall time.
func (g *peerGroup) sim(d time.Duration) time.Duration {
	return time.Duration(float64(d) / g.cfg.Sim.Speed)
}

// form joins the group: node 0 waits for the others, the others join node 0.
// It returns errLoadFailed after logging why the group could not form.
func (g *peerGroup) form(ctx context.Context) error {
	if g.cfg.Deploy.Leader() {
		return g.host(ctx)
	}
	return g.join(ctx)
}

// arrival is a node that connected to node 0 and said hello.
type arrival struct {
	conn  net.Conn
	hello joinHello
}

// host is node 0's side: listen on --dist-init-addr and wait until every
// other node has joined, or --dist-timeout has passed.
func (g *peerGroup) host(ctx context.Context) error {
	d := g.cfg.Deploy
	ln, err := net.Listen("tcp", d.DistInitAddr)
	if err != nil {
		_, port, _ := net.SplitHostPort(d.DistInitAddr)
		g.log.Raw(rankTraceback(g.now, g.cfg.NodeRanks()[0], storeFrames,
			fmt.Sprintf("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: %s, useIPv6: false, code: -98, name: EADDRINUSE, message: address already in use", port)))
		return errLoadFailed
	}
	defer ln.Close()
	arrivals := make(chan arrival)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				var h joinHello
				conn.SetReadDeadline(time.Now().Add(joinHandshakeTimeout))
				if json.NewDecoder(conn).Decode(&h) != nil {
					conn.Close()
					return
				}
				conn.SetReadDeadline(time.Time{})
				select {
				case arrivals <- arrival{conn, h}:
				case <-ctx.Done():
					conn.Close()
				}
			}()
		}
	}()
	var timeout <-chan time.Time
	if d.DistTimeout > 0 {
		t := time.NewTimer(g.sim(d.DistTimeout))
		defer t.Stop()
		timeout = t.C
	}
	joined := map[int]arrival{}
	drop := func() {
		for _, a := range joined {
			a.conn.Close()
		}
	}
	for len(joined) < d.NNodes-1 {
		select {
		case a := <-arrivals:
			if msg := g.misfit(a.hello, joined); msg != "" {
				json.NewEncoder(a.conn).Encode(joinReply{Error: msg})
				a.conn.Close()
				g.log.Printf("bakeoff sim: refused a node from %s: %s", a.conn.RemoteAddr(), msg)
				continue
			}
			joined[a.hello.NodeRank] = a
			g.log.Printf("bakeoff sim: node rank %d joined from %s (pid %d), %d/%d nodes", a.hello.NodeRank, a.conn.RemoteAddr(), a.hello.PID, len(joined)+1, d.NNodes)
		case <-timeout:
			g.log.Raw(rankTraceback(g.now, g.cfg.NodeRanks()[0], storeFrames,
				fmt.Sprintf("torch.distributed.DistStoreError: Timed out after %d seconds waiting for clients. %d/%d clients joined.", int(d.DistTimeout.Seconds()), len(joined)+1, d.NNodes)))
			drop()
			return errLoadFailed
		case <-ctx.Done():
			drop()
			return ctx.Err()
		}
	}
	for r, a := range joined {
		json.NewEncoder(a.conn).Encode(joinReply{OK: true})
		g.keep(a.conn, peer{rank: r, addr: a.conn.RemoteAddr()})
	}
	return nil
}

// misfit says why a joining node does not belong in node 0's group, or "".
func (g *peerGroup) misfit(h joinHello, joined map[int]arrival) string {
	d := g.cfg.Deploy
	switch {
	case h.NNodes != d.NNodes || h.TP != g.cfg.TP:
		return fmt.Sprintf("it runs --nnodes %d --tp-size %d, node 0 --nnodes %d --tp-size %d", h.NNodes, h.TP, d.NNodes, g.cfg.TP)
	case h.NodeRank < 1 || h.NodeRank >= d.NNodes:
		return fmt.Sprintf("node rank %d is not one of 1..%d", h.NodeRank, d.NNodes-1)
	}
	if _, dup := joined[h.NodeRank]; dup {
		return fmt.Sprintf("node rank %d has already joined", h.NodeRank)
	}
	return ""
}

// join is the side of a node of rank ≥ 1: reach node 0, retrying while it
// is not listening, say hello and wait until the group is complete.
func (g *peerGroup) join(ctx context.Context) error {
	d := g.cfg.Deploy
	host, port, _ := net.SplitHostPort(d.DistInitAddr)
	var deadline time.Time
	if d.DistTimeout > 0 {
		deadline = time.Now().Add(g.sim(d.DistTimeout))
	}
	var conn net.Conn
	for warned := false; ; {
		var err error
		var dialer net.Dialer
		conn, err = dialer.DialContext(ctx, "tcp", d.DistInitAddr)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !warned {
			g.log.Raw(fmt.Sprintf("[W] [c10d] The client socket has failed to connect to [%s]:%s (errno: 111 - Connection refused).", host, port))
			warned = true
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			g.log.Raw(rankTraceback(g.now, g.cfg.NodeRanks()[0], storeFrames,
				fmt.Sprintf("torch.distributed.DistNetworkError: The client socket has timed out after %ds while trying to connect to (%s, %s).", int(d.DistTimeout.Seconds()), host, port)))
			return errLoadFailed
		}
		if err := pause.For(ctx, joinRetry); err != nil {
			return err
		}
	}
	hostname, _ := os.Hostname()
	if err := json.NewEncoder(conn).Encode(joinHello{NodeRank: d.NodeRank, NNodes: d.NNodes, TP: g.cfg.TP, PID: g.pid, Host: hostname}); err != nil {
		conn.Close()
		return g.lostBeforeFormed(err)
	}
	// Node 0 answers once the last node has joined: until then this waits,
	// and a stop closes the link to end the wait.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	var reply joinReply
	err := json.NewDecoder(conn).Decode(&reply)
	if !stop() {
		return ctx.Err()
	}
	if err != nil {
		conn.Close()
		return g.lostBeforeFormed(err)
	}
	if !reply.OK {
		conn.Close()
		g.log.Raw(rankTraceback(g.now, g.cfg.NodeRanks()[0], storeFrames, "RuntimeError: node 0 refused this node: "+reply.Error))
		return errLoadFailed
	}
	g.keep(conn, peer{rank: 0, addr: conn.RemoteAddr()})
	return nil
}

// lostBeforeFormed is node 0 going away before the group formed.
func (g *peerGroup) lostBeforeFormed(err error) error {
	g.log.Raw(rankTraceback(g.now, g.cfg.NodeRanks()[0], storeFrames,
		fmt.Sprintf("torch.distributed.DistNetworkError: failed to recv, got 0 bytes (%v)", err)))
	return errLoadFailed
}

// failOnLoss waits, once the group has formed, for a peer's link to close,
// then plays what this node's ranks do: hang in their collective (stall is
// called at once), until the scheduler's watchdog ends the server: the
// crash is logged and Crashed closes. A stop (ctx) ends the wait.
func (g *peerGroup) failOnLoss(ctx context.Context, stall func()) {
	go func() {
		var p peer
		select {
		case p = <-g.lost:
		case <-ctx.Done():
			return
		}
		d := g.cfg.Deploy
		rank := g.cfg.NodeRanks()[0]
		hostname, _ := os.Hostname()
		g.log.Raw(fmt.Sprintf("%s:%d:%d [%d] NCCL WARN Connection closed by remote peer %s", hostname, g.pid, g.pid, rank%max(1, g.cfg.Sim.GPUs), p.ncclAddr()))
		g.log.Printf("bakeoff sim: lost node rank %d (%s); this node's collectives hang until the scheduler watchdog (%v simulated)", p.rank, p.addr, d.WatchdogTimeout)
		stall()
		if pause.For(ctx, g.sim(d.WatchdogTimeout)) != nil {
			return
		}
		g.log.Rankf(rank, "Scheduler watchdog timeout (self.watchdog_timeout=%s, self.soft=False)", d.WatchdogRepr())
		g.log.Raw(rankTraceback(g.now, rank, collectiveFrames, "RuntimeError: "+errPeerLost.Error()) + "\n" +
			fmt.Sprintf("[%s] Received sigquit from a child process. It usually means the child failed.", g.now().Format(sglog.TimeFormat)))
		close(g.crashed)
	}()
}

// The stacks of the tracebacks above: a scheduler forming the group, and
// one stuck in the broadcast of each step's requests.
const (
	storeFrames = `  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2836, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 540, in init_torch_distributed
    init_distributed_environment(
  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/rendezvous.py", line 189, in _create_c10d_store
    return TCPStore(
`
	collectiveFrames = `  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2851, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1004, in event_loop_overlap
    recv_reqs = self.recv_requests()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1210, in recv_requests
    recv_reqs = broadcast_pyobj(
  File "/sgl-workspace/sglang/python/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 374, in NCCL_CHECK
    raise RuntimeError(f"NCCL error: {error_str}")
`
)

// rankTraceback is a scheduler's exception as SGLang logs it.
func rankTraceback(now func() time.Time, rank int, frames, last string) string {
	return sglog.Stamp(now, rank) + " Scheduler hit an exception: Traceback (most recent call last):\n" + frames + last + "\n"
}

// runFollower is a node of rank ≥ 1: join node 0's group, start this node's
// schedulers and load with the group, then serve SGLang's dummy health check
// until stopped or a peer's death ends it.
func runFollower(ctx context.Context, cfg *cmdline.Config, opt RunOptions, log *sglog.Logger, now func() time.Time) error {
	peers := newPeerGroup(cfg, log, now, opt.PID)
	defer peers.Close()
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	l := &loader{cfg: cfg, log: log, speed: cfg.Sim.Speed, now: now}
	l.join = func(ctx context.Context) error {
		if err := peers.form(ctx); err != nil {
			return err
		}
		if err := startChildren(cfg, opt, now()); err != nil {
			return err
		}
		peers.failOnLoss(ctx, func() {})
		go func() {
			select {
			case <-peers.Crashed():
				cancelLoad()
			case <-ctx.Done():
			}
		}()
		return nil
	}
	if err := l.run(loadCtx); err != nil {
		switch {
		case errors.Is(err, errLoadFailed):
			return &ExitError{Code: 1, Err: err}
		case peers.hasCrashed():
			return &ExitError{Code: 1, Err: errPeerLost}
		}
		return nil // stopped while loading
	}
	ln, err := server.Listen(cfg)
	if err != nil {
		log.Raw(sglog.AddrInUseTraceback(cfg))
		return &ExitError{Code: 1, Err: fmt.Errorf("binding %s: %w", cfg.Addr(), err)}
	}
	hs := &http.Server{Handler: dummyHealth(cfg), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	log.Printf("Starting dummy health check server at %s", cfg.Addr())
	select {
	case <-peers.Crashed():
		return &ExitError{Code: 1, Err: errPeerLost}
	case <-ctx.Done():
		return nil
	}
}

// dummyHealth is SGLang's health check of a node of rank ≥ 1: 200 on its
// three paths, /metrics (empty: the API's metrics are node 0's) with
// --enable-metrics, nothing else.
func dummyHealth(cfg *cmdline.Config) http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("GET /health", ok)
	mux.HandleFunc("GET /health_generate", ok)
	mux.HandleFunc("GET /ping", ok)
	if cfg.EnableMetrics {
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			w.WriteHeader(http.StatusOK)
		})
	}
	return mux
}
