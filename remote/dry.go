package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrNotRun is what a Dry host answers where only a process that really ran
// could: a job's exit status. A caller that meets it has nothing to check.
var ErrNotRun = errors.New("dry run: nothing ran on the host")

// Dry is a host that runs nothing (spot's dry executor): it records every
// command, transfer and HTTP request it is asked for, exactly as the real
// steps send them, and answers as an idle host would: no pid files, one GPU
// with no memory in use, empty logs, this machine's platform. A process
// started on it is in its table until stopped: a server answers HTTP on
// every port as an idle, healthy server would; a job (ProcessSpec.ExitFile)
// ends at once, with no exit status (ErrNotRun).
//
// It knows remote's own commands by the functions that build them, so a
// command changed here is answered the same way there.
type Dry struct {
	name   string
	record func(line string)

	mu      sync.Mutex
	pending *ProcessSpec           // announced by Start, answered by the next Run
	procs   map[string]*dryProcess // by pid file
	nextPID int
	lastReq string // the last HTTP request recorded, to fold repeats
	http    *http.Server
	conns   chan net.Conn
	done    chan struct{} // closed with the host
}

type dryProcess struct {
	spec ProcessSpec
	pid  int
}

var (
	_ Host         = (*Dry)(nil)
	_ startWatcher = (*Dry)(nil)
)

// NewDry returns a dry host named name; record receives each thing it is
// asked to do, one line (or a multi-line command) at a time.
func NewDry(name string, record func(line string)) *Dry {
	d := &Dry{name: name, record: record, procs: map[string]*dryProcess{}, nextPID: 4242}
	d.conns = make(chan net.Conn)
	d.http = &http.Server{Handler: http.HandlerFunc(d.serveHTTP)}
	l := dryListener{conns: d.conns, done: make(chan struct{}), once: new(sync.Once)}
	d.done = l.done
	go func() { _ = d.http.Serve(l) }()
	return d
}

// Name is the host's name as the campaign gives it.
func (d *Dry) Name() string { return d.name }

// RunsNothing says that what the host answers was not run: a caller that
// reads a program's own output (an engine's --help) has nothing to read.
func (d *Dry) RunsNothing() bool { return true }

func (d *Dry) note(line string) {
	d.mu.Lock()
	d.lastReq = ""
	d.mu.Unlock()
	d.record(line)
}

// starting records the process Start is about to launch in a line a person
// reads before the script that launches it.
func (d *Dry) starting(p ProcessSpec) {
	d.note("# start detached, pid file " + p.PIDFile + ": " + p.Command)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = &p
}

// Run records cmd and answers it as an idle host would.
func (d *Dry) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	d.note(strings.TrimRight(cmd, "\n"))
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pending; p != nil && strings.HasSuffix(strings.TrimSpace(cmd), "cat "+QuotePath(p.PIDFile)) {
		d.pending = nil
		d.nextPID++
		d.procs[p.PIDFile] = &dryProcess{spec: *p, pid: d.nextPID}
		return []byte(strconv.Itoa(d.nextPID) + "\n"), nil, nil
	}
	for file, pr := range d.procs {
		switch cmd {
		case readPIDCmd(file):
			return []byte(strconv.Itoa(pr.pid) + "\n"), nil, nil
		case groupMembersCmd(pr.pid):
			if pr.spec.ExitFile != "" {
				return nil, nil, nil // a job has ended
			}
			return []byte(strconv.Itoa(pr.pid) + "\n"), nil, nil
		case removePIDCmd(file):
			delete(d.procs, file)
			return nil, nil, nil
		}
		if pr.spec.ExitFile != "" && cmd == exitStatusCmd(pr.spec.ExitFile) {
			return nil, nil, fmt.Errorf("%s: the exit status of %q: %w", d.name, pr.spec.Command, ErrNotRun)
		}
	}
	switch {
	case strings.HasSuffix(cmd, " "+queryGPUs):
		// An idle GPU: the wait treats an empty answer as a broken driver.
		return []byte("0, dry-run GPU, 0, 0\n"), nil, nil
	case strings.HasSuffix(cmd, " "+queryFacts):
		return []byte("dry-run, dry-run GPU\n"), nil, nil
	case cmd == unameCmd:
		return []byte(dryUname() + "\n"), nil, nil
	case strings.HasPrefix(cmd, hasCommandPrefix):
		return []byte("yes\n"), nil, nil
	}
	return nil, nil, nil
}

// dryUname is what `uname -s -m` says on this machine, so that the dry run
// shows the run a host of this machine's platform would get.
func dryUname() string {
	return unameName(unameOS, runtime.GOOS) + " " + unameName(unameArch, runtime.GOARCH)
}

// unameName is the first (sorted) uname word that maps to goName.
func unameName(m map[string]string, goName string) string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == goName {
			return k
		}
	}
	return goName
}

// Upload records the transfer.
func (d *Dry) Upload(_ context.Context, local, remote string) error {
	d.note("upload " + local + " → " + remote)
	return nil
}

// Download records the transfer and leaves an empty local file: what a
// process that ran for no time would have written.
func (d *Dry) Download(_ context.Context, remote, local string) error {
	d.note("download " + remote + " → " + local)
	if f, err := os.OpenFile(local, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
		f.Close()
	}
	return nil
}

// Open reads every file as empty.
func (d *Dry) Open(context.Context, string, int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}

// Dial connects to the idle server while a server process runs, and is
// refused otherwise, as the port of a host with nothing started would be.
func (d *Dry) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	up := false
	for _, pr := range d.procs {
		up = up || pr.spec.ExitFile == ""
	}
	d.mu.Unlock()
	if !up {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("dry run: nothing listens on " + addr)}
	}
	client, server := net.Pipe()
	select {
	case d.conns <- server:
		return client, nil
	case <-d.done:
		client.Close()
		server.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

// serveHTTP records a request and answers as an idle, healthy server: 200,
// one choice for a completion, a one-token stream for a streamed one.
// Repeats of the same request in a row (a sweep's) are recorded once.
func (d *Dry) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &req)
	line := r.Method + " http://" + r.Host + r.URL.RequestURI()
	if req.Stream {
		line += " (streamed)"
	} else if len(body) > 0 {
		line += " " + strings.TrimSpace(string(body))
	}
	d.mu.Lock()
	repeat := line == d.lastReq || req.Stream && d.lastReq != "" && strings.HasSuffix(d.lastReq, " (streamed)")
	d.mu.Unlock()
	if !repeat {
		d.record(line)
	}
	d.mu.Lock()
	d.lastReq = line
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method != http.MethodPost:
		fmt.Fprintln(w, "{}")
	case req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, `data: {"choices":[{"index":0,"text":" ","delta":{"content":" "},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "data: [DONE]")
		fmt.Fprintln(bw)
		bw.Flush()
	default:
		fmt.Fprintln(w, `{"choices":[{"index":0,"text":" ","message":{"role":"assistant","content":" "},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}
}

// Close stops the idle server.
func (d *Dry) Close() error { return d.http.Close() }

// dryListener hands the dry host's dialed connections to its HTTP server.
type dryListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  *sync.Once
}

func (l dryListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l dryListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l dryListener) Addr() net.Addr { return dryAddr{} }

type dryAddr struct{}

func (dryAddr) Network() string { return "dry" }
func (dryAddr) String() string  { return "dry-run" }
