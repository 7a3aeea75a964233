package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/campaigntest"
	"github.com/bakeoff-dev/bakeoff/internal/testhost"
	"github.com/bakeoff-dev/bakeoff/results"
)

// fleet is a set of namespace hosts that one HOME reaches by alias, and a
// folder for the campaign's files and what the run leaves.
type fleet struct {
	t     *testing.T
	hosts []*testhost.Host
	home  string
	dir   string // configs/, scenarios/
	out   string // kept after the test: the run, samples, output
	env   []string
	// workdir is the fleet's host.workdir.
	workdir string
}

// newFleet makes n hosts, each with the fake nvidia-smi first on its PATH.
// out is where the run's files are kept (made if missing).
func newFleet(t *testing.T, n int, out string) *fleet {
	t.Helper()
	f := &fleet{t: t, home: t.TempDir(), dir: campaigntest.NewDir(t), out: out, workdir: t.TempDir()}
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		h := testhost.New(t, testhost.WithNvidiaSMI(bakeoffBin))
		if err := h.AddToHome(f.home); err != nil {
			t.Fatal(err)
		}
		f.hosts = append(f.hosts, h)
	}
	// gctrace: the runtime prints the heap live after each collection on
	// stderr, which tells a leak from memory the runtime has yet to return.
	f.env = campaigntest.Env(t, f.home, "GODEBUG=gctrace=1")
	return f
}

// variants are the scenarios a campaign cycles through: the demo's three
// (docs/SIM.md), at tp 1 so that a host runs one scheduler child.
var variants = []map[string]any{
	{"tp": 1, "enable-metrics": true, "max-running-requests": 256},
	{"tp": 1, "enable-metrics": true, "max-running-requests": 256, "speculative-algorithm": "EAGLE3",
		"speculative-num-steps": 3, "speculative-eagle-topk": 4, "speculative-num-draft-tokens": 8},
	{"tp": 1, "enable-metrics": true, "max-running-requests": 256, "speculative-algorithm": "EAGLE3",
		"speculative-num-steps": 3, "speculative-eagle-topk": 1, "speculative-num-draft-tokens": 4},
}

// plan is a campaign's shape.
type plan struct {
	name      string
	scenarios int
	rounds    int
	levels    []int
	requests  int
	maxTokens int
	warmup    int
	// speed is the sims' --sim-speed; loadTime their simulated load time.
	speed    int
	loadTime time.Duration
}

// launches is how many launches the campaign makes.
func (p plan) launches() int { return p.scenarios * p.rounds }

// write renders the campaign and its scenario files; it returns the
// campaign file's path.
func (f *fleet) write(p plan) string {
	f.t.Helper()
	var names []string
	for i := 0; i < p.scenarios; i++ {
		name := fmt.Sprintf("s%03d", i)
		names = append(names, name)
		doc := map[string]any{"name": name, "engine": "sglang", "model": "/models/sim", "args": variants[i%len(variants)]}
		if i%len(variants) == 2 {
			doc["env"] = map[string]string{"SGLANG_ENABLE_SPEC_V2": "1"}
		}
		f.writeYAML(filepath.Join("scenarios", name+".yaml"), doc)
	}
	doc := map[string]any{
		"campaign": p.name,
		"engine": map[string]any{
			"command": []string{"{bakeoff}", "sim", "--sim-speed", strconv.Itoa(p.speed),
				"--sim-load-time", p.loadTime.String(), "--sim-launch-sigma", "0.01"},
			"port":           30000,
			"health_timeout": "2m",
			"poll_interval":  "200ms",
			"stop_grace":     "5s",
		},
		"gpu": map[string]any{"max_used_mib": 1024, "wait_timeout": "1m"},
		"sweep": map[string]any{
			"concurrency": p.levels,
			"requests":    p.requests,
			"max_tokens":  p.maxTokens,
			"warmup":      p.warmup,
			"prompts":     "builtin",
			"temperature": 0,
			"ignore_eos":  true,
		},
		"baseline":  names[0],
		"scenarios": names,
		"rounds":    p.rounds,
	}
	for k, v := range f.hostKeys() {
		doc[k] = v
	}
	return f.writeYAML(filepath.Join("configs", p.name+".yaml"), doc)
}

// linkPatience is how long a host may stay unreachable before it is given
// up on: longer than the soak's link cuts, short enough that a host lost
// for good hands its round on within minutes of a short campaign.
const linkPatience = "90s"

// hostKeys is the campaign's host section: `host:` for one host; for a
// fleet, `hosts:` with the settings they share in `host:`.
func (f *fleet) hostKeys() map[string]any {
	if len(f.hosts) == 1 {
		h := f.hosts[0]
		return map[string]any{"host": map[string]any{"ssh": h.Alias, "workdir": h.Workdir, "link_patience": linkPatience}}
	}
	var aliases []string
	for _, h := range f.hosts {
		aliases = append(aliases, h.Alias)
	}
	return map[string]any{"hosts": aliases, "host": map[string]any{"workdir": filepath.Join(f.workdir, "{host}"), "link_patience": linkPatience}}
}

func (f *fleet) writeYAML(rel string, doc any) string {
	f.t.Helper()
	return campaigntest.WriteYAML(f.t, f.dir, rel, doc)
}

// running is a `bakeoff run` in progress, sampled.
type running struct {
	cmd     *exec.Cmd
	sampler *Sampler
	started time.Time
	done    chan struct{}
	runDir  string
}

// finished is a `bakeoff run` that ended.
type finished struct {
	code           int
	wall           time.Duration
	user, system   time.Duration // from the kernel's accounting at exit
	maxRSSKiB      int64         // ru_maxrss at exit
	samples        []Sample
	stdout, stderr string
}

// start runs `bakeoff run cfg --out RUNDIR` in its own process group, its
// output into out/, and samples it every interval into out/samples.csv.
func (f *fleet) start(ctx context.Context, cfg string, interval time.Duration) *running {
	f.t.Helper()
	r := &running{runDir: filepath.Join(f.out, "run"), done: make(chan struct{})}
	cmd := campaigntest.InGroup(exec.CommandContext(ctx, bakeoffBin, "run", cfg, "--out", r.runDir))
	cmd.Env, cmd.Dir = f.env, f.dir
	stdout, err := os.Create(filepath.Join(f.out, "stdout.txt"))
	if err != nil {
		f.t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(f.out, "stderr.txt"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { stdout.Close(); stderr.Close() })
	cmd.Stdout, cmd.Stderr = stdout, stderr
	csvFile, err := os.Create(filepath.Join(f.out, "samples.csv"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { csvFile.Close() })
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	r.cmd = cmd
	r.sampler = StartSampler(cmd.Process.Pid, interval, csvFile)
	go func() { cmd.Wait(); close(r.done) }()
	return r
}

// wait waits for the run to end and collects what it measured.
func (f *fleet) wait(r *running) finished {
	f.t.Helper()
	<-r.done
	var res finished
	res.wall = time.Since(r.started)
	samples, err := r.sampler.Stop()
	if err != nil {
		f.t.Error(err)
	}
	res.samples = samples
	st := r.cmd.ProcessState
	res.code = st.ExitCode()
	res.user, res.system = st.UserTime(), st.SystemTime()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		res.maxRSSKiB = ru.Maxrss
	}
	out, _ := os.ReadFile(filepath.Join(f.out, "stdout.txt"))
	errOut, _ := os.ReadFile(filepath.Join(f.out, "stderr.txt"))
	res.stdout, res.stderr = string(out), string(errOut)
	for _, p := range []string{"panic:", "fatal error:", "goroutine "} {
		if strings.Contains(res.stdout+res.stderr, p) {
			f.t.Errorf("bakeoff run printed %q", p)
		}
	}
	return res
}

// entry is a journal line, with the fleet member's name.
type entry struct {
	Time      time.Time `json:"time"`
	Scenario  string    `json:"scenario"`
	Round     int       `json:"round"`
	Attempt   int       `json:"attempt"`
	Phase     string    `json:"phase"`
	Event     string    `json:"event"`
	Outcome   string    `json:"outcome"`
	Error     string    `json:"error"`
	Host      string    `json:"host"`
	DurationS float64   `json:"duration_s"`
}

// readJournal reads the whole journal of a run in progress; a torn last
// line is skipped.
func readJournal(runDir string) []entry {
	b, err := os.ReadFile(filepath.Join(runDir, results.JournalFile))
	if err != nil {
		return nil
	}
	var out []entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		var e entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// hostMatches says whether a journal line was written for host h (any
// line matches in a single-host run, whose lines name no host).
func hostMatches(e entry, h *testhost.Host) bool {
	return e.Host == "" || strings.Contains(e.Host, h.Alias)
}

// processes lists h's processes but sshd.
func processes(t *testing.T, h *testhost.Host) []testhost.Process {
	t.Helper()
	ps, err := h.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// isServer matches the sim's server process (not its scheduler children,
// the sweep or the fake nvidia-smi).
func isServer(p testhost.Process) bool {
	f := strings.Fields(p.Cmdline)
	return len(f) > 1 && filepath.Base(f[0]) == "bakeoff" && f[1] == "sim" &&
		!strings.Contains(p.Cmdline, "--sim-child-rank")
}

// isSweep matches `bakeoff sweep` (not the shell around it).
func isSweep(p testhost.Process) bool {
	f := strings.Fields(p.Cmdline)
	return len(f) > 1 && filepath.Base(f[0]) == "bakeoff" && f[1] == "sweep"
}
