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
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrNotRun is what a Dry host answers where only a process that really ran
// could: a job's exit status. A caller that meets it has nothing to check.
var ErrNotRun = errors.New("dry run: nothing ran on the host")

// DryRecord is one thing a Dry host was asked to do, or, with If set, one
// a live host would be asked to do on a branch the dry host's answers did
// not take.
type DryRecord struct {
	// Line is the command exactly as it is sent (a script as one
	// multi-line string), a transfer ("upload A → B") or an HTTP request
	// ("GET URL").
	Line string
	// If says when a live host runs Line: "" always, else the condition
	// ("if the process group started with /w/server.pid still runs",
	// "otherwise").
	If string
	// Helpers are the scripts remote sends inside many commands that Line
	// holds, each a verbatim part of it, so that a listing can print each
	// once and name it after.
	Helpers []DryHelper
	// Start, when set, says that Line is Start's script for a process.
	Start *DryStart
	// Stops, when set, is the pid file whose process group Line reads
	// before a stop, or stops.
	Stops string
}

// DryHelper is a script that remote sends inside many commands.
type DryHelper struct {
	// Tag names it in a reference ("stop" for #stop-1); Name for people
	// ("the stop script").
	Tag, Name string
	// Text is the script, verbatim as it appears in the command.
	Text string
}

// DryStart is the process a Start script launches.
type DryStart struct {
	Spec ProcessSpec
	// Wrapper is the script with the spec's values in place of «name»
	// («command», «pid file», «log», «dir», …): two starts with the same
	// Wrapper differ only in those values.
	Wrapper string
}

// The scripts a dry host names in its records.
var dryHelpers = []DryHelper{
	{Tag: "procs", Name: "the process table function", Text: procsFn},
	{Tag: "stop", Name: "the stop script", Text: stopBody},
	{Tag: "members", Name: "the group members function", Text: membersFn},
	{Tag: "alive", Name: "the liveness look", Text: aliveFn},
}

// DryStandInPID is the first pid a dry host gives: each pid file gets its
// own from here on, the same every time, so that launches that differ only
// in their round read the same.
const DryStandInPID = 4243

// Dry is a host that runs nothing (spot's dry executor): it records every
// command, transfer and HTTP request it is asked for, exactly as the real
// steps send them, and answers as a host whose only load is what it was
// asked to start: one GPU with no memory in use, empty logs, this
// machine's platform. A process started on it is in its table until
// stopped: a server answers HTTP on every port as an idle, healthy server
// would; a job (ProcessSpec.ExitFile) ends at once, with no exit status
// (ErrNotRun).
//
// Where a live host's answer decides what runs next, it shows both
// branches, the one not taken marked with its condition (DryRecord.If). A
// stop finds every pid file naming a running process group, so that the
// stop script (SIGTERM, grace, SIGKILL) is sent and recorded as it would
// be, marked "if … names a running process group", and the removal of a
// pid file whose processes are gone is recorded after it, marked
// "otherwise". Callers show their own branches with ShowBranch.
//
// It knows remote's own commands by the functions that build them, so a
// command changed here is answered the same way there.
type Dry struct {
	name   string
	record func(DryRecord)

	mu       sync.Mutex
	pending  *ProcessSpec           // announced by Start, answered by the next Run
	procs    map[string]*dryProcess // by pid file
	pids     map[string]int         // the stand-in pid of each pid file, quoted as sent
	stopping *dryStop               // the stop whose snapshot was answered, until its script
	lastReq  string                 // the last HTTP request recorded, to fold repeats
	http     *http.Server
	conns    chan net.Conn
	done     chan struct{} // closed with the host
}

type dryProcess struct {
	spec ProcessSpec
	pid  int
}

// dryStop is a stop in progress: the pid file as sent, and the condition
// its script runs under on a live host.
type dryStop struct {
	pidFile, cond string
}

var (
	_ Host         = (*Dry)(nil)
	_ startWatcher = (*Dry)(nil)
	_ brancher     = (*Dry)(nil)
)

// NewDry returns a dry host named name; record receives each thing it is
// asked to do, one command (a script as one) at a time.
func NewDry(name string, record func(DryRecord)) *Dry {
	d := &Dry{name: name, record: record, procs: map[string]*dryProcess{}, pids: map[string]int{}}
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

func (d *Dry) note(r DryRecord) {
	d.mu.Lock()
	d.lastReq = ""
	d.mu.Unlock()
	for _, h := range dryHelpers {
		if strings.Contains(r.Line, h.Text) {
			r.Helpers = append(r.Helpers, h)
		}
	}
	d.record(r)
}

// brancher is a host that runs nothing and shows the commands of the
// branches its answers do not take (Dry).
type brancher interface {
	branch(cond, cmd string)
}

// ShowBranch tells a host that runs nothing (Dry) the command a live host
// would run only if cond held, where the dry host's answer took the other
// way: the dry run shows it, marked with cond. On any other host it does
// nothing.
func ShowBranch(h Host, cond, cmd string) {
	if b, ok := h.(brancher); ok {
		b.branch(cond, cmd)
	}
}

func (d *Dry) branch(cond, cmd string) { d.note(DryRecord{Line: cmd, If: cond}) }

// starting notes the process Start is about to launch, for the script
// that launches it.
func (d *Dry) starting(p ProcessSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = &p
}

// pidOf is the stand-in pid of a pid file as sent (quoted); d.mu held.
func (d *Dry) pidOf(quoted string) int {
	if pid, ok := d.pids[quoted]; ok {
		return pid
	}
	pid := DryStandInPID + len(d.pids)
	d.pids[quoted] = pid
	return pid
}

// Run records cmd and answers it as a host would where everything it was
// asked to start runs, and anything it is asked to stop still runs.
func (d *Dry) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	cmd = strings.TrimRight(cmd, "\n")
	d.mu.Lock()
	p := d.pending
	if p != nil && strings.HasSuffix(strings.TrimSpace(cmd), "cat "+QuotePath(p.PIDFile)) {
		d.pending = nil
		pid := d.pidOf(QuotePath(p.PIDFile))
		d.procs[p.PIDFile] = &dryProcess{spec: *p, pid: pid}
		d.mu.Unlock()
		d.note(DryRecord{Line: cmd, Start: &DryStart{Spec: *p, Wrapper: startWrapper(cmd, *p)}})
		return []byte(strconv.Itoa(pid) + "\n"), nil, nil
	}
	d.mu.Unlock()
	if file, ok := stopSnapshotFile(cmd); ok {
		return d.snapshot(cmd, file)
	}
	if strings.HasSuffix(cmd, "\n"+stopScript) {
		return d.stop(cmd)
	}
	d.note(DryRecord{Line: cmd})
	d.mu.Lock()
	defer d.mu.Unlock()
	for file, pr := range d.procs {
		switch cmd {
		case readPIDCmd(file):
			return []byte(strconv.Itoa(pr.pid) + "\n"), nil, nil
		case aliveCmd(file):
			if pr.spec.ExitFile != "" {
				// A job has ended: its leader and its group are gone.
				return []byte(fmt.Sprintf("pidfile %d\n", pr.pid)), nil, nil
			}
			return []byte(fmt.Sprintf("pidfile %d\nlive\n", pr.pid)), nil, nil
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

// stopSnapshotFile is the pid file, as sent, that cmd reads with the
// process table before a stop (readStopSnapshot's command).
func stopSnapshotFile(cmd string) (string, bool) {
	rest, ok := strings.CutPrefix(cmd, "if [ -s ")
	if !ok {
		return "", false
	}
	file, _, ok := strings.Cut(rest, " ]; then ")
	if !ok || cmd != stopSnapshotCmd(file) {
		return "", false
	}
	return file, true
}

// snapshot answers a stop's first look: the pid file names a group whose
// leader runs, alone, so that the stop sends its script. A process the dry
// host started is its own; any other stands for one an earlier run left.
func (d *Dry) snapshot(cmd, file string) ([]byte, []byte, error) {
	d.mu.Lock()
	pid := d.pidOf(file)
	cond := fmt.Sprintf("if %s is left from an earlier run and names a running process group", file)
	for f := range d.procs {
		if QuotePath(f) == file {
			cond = fmt.Sprintf("if the process group started with %s still runs", file)
		}
	}
	d.stopping = &dryStop{pidFile: file, cond: cond}
	d.mu.Unlock()
	d.note(DryRecord{Line: cmd, Stops: file})
	return []byte(fmt.Sprintf("pidfile %d\nstat %[1]d 1 %[1]d %[1]d 1\n", pid)), nil, nil
}

// stop records the stop script under its condition, and after it what a
// stop runs when nothing was running: the pid file's removal.
func (d *Dry) stop(cmd string) ([]byte, []byte, error) {
	d.mu.Lock()
	st := d.stopping
	d.stopping = nil
	if st != nil {
		for f := range d.procs {
			if QuotePath(f) == st.pidFile {
				delete(d.procs, f)
			}
		}
	}
	d.mu.Unlock()
	if st == nil {
		d.note(DryRecord{Line: cmd})
	} else {
		d.note(DryRecord{Line: cmd, If: st.cond, Stops: st.pidFile})
		d.note(DryRecord{Line: "rm -f " + st.pidFile, If: "otherwise"})
	}
	return []byte("sent TERM\nwaited 0\nleft\n"), nil, nil
}

// startWrapper is Start's script for p with p's values in place of
// «name»: the command (as the inner shell quotes it), the exit status
// file, the pid file, the log, the working directory and the directories
// made for them, the longest first, so that a path inside another is
// replaced as part of it.
func startWrapper(script string, p ProcessSpec) string {
	inner := func(s string) string { return strings.ReplaceAll(s, "'", `'\''`) }
	script = strings.ReplaceAll(script, inner(Quote(p.Command)), "«command»")
	vals := []struct{ name, v string }{
		{"«exit file»", p.ExitFile}, {"«pid file»", p.PIDFile}, {"«log»", p.LogFile}, {"«dir»", p.Dir},
		{"«pid file's dir»", path.Dir(p.PIDFile)}, {"«log's dir»", path.Dir(p.LogFile)},
	}
	slices.SortStableFunc(vals, func(a, b struct{ name, v string }) int { return len(b.v) - len(a.v) })
	for _, x := range vals {
		if x.v != "" {
			script = strings.ReplaceAll(script, inner(QuotePath(x.v)), x.name)
			script = strings.ReplaceAll(script, QuotePath(x.v), x.name)
		}
	}
	return script
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
	d.note(DryRecord{Line: "upload " + local + " → " + remote})
	return nil
}

// Download records the transfer and leaves an empty local file: what a
// process that ran for no time would have written.
func (d *Dry) Download(_ context.Context, remote, local string) error {
	d.note(DryRecord{Line: "download " + remote + " → " + local})
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
		d.record(DryRecord{Line: line})
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
