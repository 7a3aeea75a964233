package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"github.com/bakeoff-dev/bakeoff/internal/golden"
	"github.com/bakeoff-dev/bakeoff/orchestrator"
)

// dryNow is the dry runs' clock in these tests.
var dryNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// dryResults is where the dry runs look for earlier runs of their
// campaigns: nowhere, so that the costs are the planner's assumptions.
var dryResults = filepath.Join("testdata", "dryrun", "results")

// dryOptions are a dry run's options for campaign c in these tests.
func dryOptions(c *campaign.Campaign) orchestrator.Options {
	return orchestrator.Options{Campaign: c, Bakeoff: "/usr/local/bin/bakeoff", Version: "test",
		Now: func() time.Time { return dryNow }, Machine: "here", PID: 4242, ResultsRoot: dryResults}
}

// loadDry loads a campaign for a dry run; a local host's workdir is fixed,
// since its default names this user and TMPDIR.
func loadDry(t *testing.T, path string) *campaign.Campaign {
	t.Helper()
	c, err := campaign.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host.Local {
		c.Host.Workdir = "/work/bakeoff"
	}
	return c
}

// TestDryRunGolden: the dry run of a campaign of each kind of host, as
// --dry-run prints it. Every kind shows the stop script's kill sequence
// (SIGTERM to the process group, the grace, SIGKILL) under the condition
// a live host runs it on, the pid file's removal otherwise, and the lock's
// release; the Slurm one shows what runs on the login node: the
// allocation before the campaign and its release after.
func TestDryRunGolden(t *testing.T) {
	tests := []struct {
		kind    string
		workdir string
		want    []string // what the golden file must show, whatever it holds
	}{
		{"local", "/work/bakeoff", []string{"hosts     local; workdir /work/bakeoff",
			"# start detached (setsid), pid file /work/bakeoff/server.pid, output to /work/bakeoff/logs/a.log, in /work/bakeoff:\n" +
				"  #   env -- BAKEOFF_LAUNCH=0 BAKEOFF_ROUND=1 python3 -m sglang.launch_server "}},
		{"ssh", "/data/bakeoff", []string{"hosts     ssh bench@gpu-box:2222", "$ upload /usr/local/bin/bakeoff → /data/bakeoff/bin/bakeoff"}},
		{"fleet", "/data/bakeoff/gpu-a", []string{"a fleet of gpu-a, gpu-b", "2 hosts at once", "/data/bakeoff/gpu-a/server.pid"}},
		{"slurm", "/tmp/bakeoff-NODE", []string{"hpc-login$ salloc --no-shell --job-name=bakeoff-dry-slurm --nodes=2 ", "hpc-login$ scancel "}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			c := loadDry(t, filepath.Join("testdata", "dryrun", "configs", tt.kind+".yaml"))
			var out bytes.Buffer
			if err := dryRun(context.Background(), &out, c, dryOptions(c)); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			want := append(tt.want,
				"# if "+tt.workdir+"/server.pid is left from an earlier run and names a running process group:\n"+
					"    $ g=4244; tree=''; all=4244:1:4244; grace=3000; killwait=1000; poll=0.10; pidfile="+tt.workdir+"/server.pid\n",
				"# if the process group started with "+tt.workdir+"/server.pid still runs:\n",
				`kill -s TERM -- "-$g" 2>/dev/null; outside TERM; echo "sent TERM"`,
				`kill -s KILL -- "-$g" 2>/dev/null; outside KILL; echo "sent KILL"`,
				"  # otherwise:\n    $ rm -f "+tt.workdir+"/server.pid\n",
				"  $ cat "+tt.workdir+"/bakeoff.lock\n  # if the lock still names this run:\n    $ rm -f "+tt.workdir+"/bakeoff.lock\n",
				"<same stop script as above, #stop-1>")
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("the dry run does not show %q", w)
				}
			}
			if strings.Contains(text, "would fail") || strings.Contains(text, "# warning") {
				t.Errorf("the dry run of an idle host shows a failure or a warning:\n%s", text)
			}
			if n := strings.Count(text, "#stop-1, the stop script:"); n != 1 {
				t.Errorf("the stop script is printed whole %d times, want once", n)
			}
			golden.Check(t, filepath.Join("testdata", "dryrun", tt.kind+".golden"), out.Bytes())
		})
	}
}

// launchHead is a launch's heading in the listing: its scenario, and its
// reference when its commands follow.
var launchHead = regexp.MustCompile(`^### (\S+): launch (\d+) of (\d+)(?: \(#(\S+)\)|: the commands of #(\S+) with .*)$`)

// TestDryRunShippedKimi: the dry run of the seeds' whole campaign,
// configs/rtx6000-kimi.yaml, fits in a few hundred lines: each of its three
// scenarios' launches is shown once, in round 1, and the 15 of the other
// five rounds name it, since they differ only in the round. SGLang is
// launched with the flags current SGLang takes, none it removed or
// renamed, and no FlashInfer allreduce fusion, which it refuses on the
// host's SM120 GPUs; eagle3-topk4 and eagle3-topk1-specv2 differ in the
// tree and the overlap schedule, the difference SGLang still makes.
// Regenerate with go test -update.
func TestDryRunShippedKimi(t *testing.T) {
	c := loadDry(t, filepath.Join("..", "..", "configs", "rtx6000-kimi.yaml"))
	var out bytes.Buffer
	if err := dryRun(context.Background(), &out, c, dryOptions(c)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	if n := strings.Count(text, "\n"); n > maxKimiLines {
		t.Errorf("the dry run is %d lines, want at most %d", n, maxKimiLines)
	}
	lines := strings.Split(text, "\n")
	launches := map[string]string{}
	var shown, named int
	for i, line := range lines {
		m := launchHead.FindStringSubmatch(line)
		switch {
		case m == nil:
			continue
		case m[5] != "":
			named++
			if m[5] != m[1]+"-1" {
				t.Errorf("%s names %s, want its own round 1", line, m[5])
			}
			continue
		}
		shown++
		for _, l := range lines[i:] {
			if strings.HasPrefix(l, "  #   env -- ") {
				launches[m[1]] = l
				break
			}
		}
	}
	if shown != 3 || named != 15 || len(launches) != 3 {
		t.Fatalf("%d launches shown, %d named, launch commands of %d scenarios; want 3, 15, 3:\n%s", shown, named, len(launches), text)
	}
	for name, line := range launches {
		for _, want := range []string{"/opt/venv/bin/python -m sglang.launch_server ", " --tp-size 8 ", " --cuda-graph-max-bs-decode 128 ", " --max-running-requests 256 "} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: the launch does not show %q:\n%s", name, want, line)
			}
		}
		if got, want := strings.Contains(line, " --disable-overlap-schedule "), name == "eagle3-topk4"; got != want {
			t.Errorf("%s: --disable-overlap-schedule %v, want %v:\n%s", name, got, want, line)
		}
	}
	for _, old := range oldSpellings {
		if m := old.re.FindString(text); m != "" {
			t.Errorf("the dry run shows %q (%s)", strings.TrimSpace(m), old.now)
		}
	}
	// SGLang refuses FlashInfer allreduce fusion on SM120 ("FlashInfer
	// allreduce fusion requires SM90 or SM10X NVIDIA GPUs.").
	if strings.Contains(text, "--flashinfer-allreduce-fusion-backend") {
		t.Errorf("the dry run asks for FlashInfer allreduce fusion, which SGLang refuses on an RTX PRO 6000")
	}
	if strings.Contains(text, "would fail") || strings.Contains(text, "# warning") {
		t.Errorf("the dry run of an idle host shows a failure or a warning:\n%s", text)
	}
	golden.Check(t, filepath.Join("testdata", "dryrun", "rtx6000-kimi.golden"), out.Bytes())
}

// maxKimiLines bounds the dry run of the seeds' campaign: a few hundred
// lines a person reads before letting it loose (the listing of every
// command of every launch was 2,951).
const maxKimiLines = 500

// TestDryRunBudget: with a budget, the dry run leaves out the rounds a
// run whose launches take the expected time would leave out, and says so
// in the summary and in their place; when no round fits it fails, saying
// why. The seeds' campaign expects a round of three launches to take
// about 47 minutes; the first round is judged, as a run judges it, by the
// campaign's bound on a launch (53 minutes each).
func TestDryRunBudget(t *testing.T) {
	tests := []struct {
		budget   time.Duration
		left     []int // the rounds left out
		want     []string
		nothing  bool // no round fits
		launches int
	}{
		{8 * time.Hour, nil, []string{"budget    budget of 8h0m0s: every round fits"}, false, 18},
		{2*time.Hour + 50*time.Minute, []int{4, 5, 6}, []string{
			"budget    budget of 2h50m0s: rounds 4, 5, 6 left out, not started for lack of time (below)",
			"            round 4: left out for lack of time",
			"\n## Rounds 4 to 6: left out, not started for lack of time\n3 launches × 15m",
			"(the mean of 9 launches before it, each the expected time in a dry run)",
		}, false, 9},
		{time.Hour, []int{1, 2, 3, 4, 5, 6}, []string{
			"launches  none: every round is left out for lack of time (below)",
			"budget    budget of 1h0m0s: no round fits, so a run would launch nothing",
			"\n## Rounds 1 to 6: left out, not started for lack of time\n3 launches × 53m10s (no launch finished yet:",
		}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.budget.String(), func(t *testing.T) {
			c := loadDry(t, filepath.Join("..", "..", "configs", "rtx6000-kimi.yaml"))
			c.Budget = tt.budget
			var out bytes.Buffer
			err := dryRun(context.Background(), &out, c, dryOptions(c))
			var none *nothingFitsError
			if got := errors.As(err, &none); got != tt.nothing || (err != nil && !tt.nothing) {
				t.Fatalf("dryRun: %v; want a nothing-fits error %v", err, tt.nothing)
			}
			text := out.String()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the dry run does not show %q:\n%s", w, text)
				}
			}
			n := 0
			for _, line := range strings.Split(text, "\n") {
				if launchHead.MatchString(line) {
					n++
				}
			}
			if n != tt.launches {
				t.Errorf("%d launches, want %d", n, tt.launches)
			}
			for _, r := range tt.left {
				if strings.Contains(text, fmt.Sprintf("## Round %d\n", r)) {
					t.Errorf("round %d is listed, and left out", r)
				}
			}
		})
	}
}

// TestDryRunNothingFitsExits: `bakeoff run --dry-run` with a budget that
// fits no round prints the listing, says why on stderr and exits 1.
func TestDryRunNothingFitsExits(t *testing.T) {
	e, stdout, stderr := testEnv()
	code := runRun(context.Background(), e, []string{filepath.Join("..", "..", "configs", "rtx6000-kimi.yaml"),
		"--dry-run", "--budget", "1h", "--results", t.TempDir()})
	if code != exitFailed {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailed, stdout, stderr)
	}
	if want := "bakeoff run --dry-run: no round fits in the campaign's budget of 1h0m0s, so a run would launch nothing: round 1: 3 launches × 53m10s"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	if !strings.Contains(stdout.String(), "launches  none") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestDryClock: the dry run's clock moves by a launch's expected time at
// each launch and, with several hosts, starts a round when the first host
// is free, as a fleet's hosts take the next round.
func TestDryClock(t *testing.T) {
	const per = 10 * time.Minute
	tests := []struct {
		hosts int
		want  []time.Duration // when each of four rounds of two launches can start
		end   time.Duration
	}{
		{1, []time.Duration{0, 20 * time.Minute, 40 * time.Minute, 60 * time.Minute}, 80 * time.Minute},
		{2, []time.Duration{0, 0, 20 * time.Minute, 20 * time.Minute}, 40 * time.Minute},
		{3, []time.Duration{0, 0, 0, 20 * time.Minute}, 40 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.hosts), func(t *testing.T) {
			k := newDryClock(dryNow, tt.hosts, per)
			for r, want := range tt.want {
				if got := k.now().Sub(dryNow); got != want {
					t.Errorf("round %d can start at %s, want %s", r+1, got, want)
				}
				start := k.now()
				k.launch(r + 1)
				k.launch(r + 1)
				if got := k.now().Sub(start); got != 2*per {
					t.Errorf("round %d's second launch ends %s after the first began, want %s", r+1, got, 2*per)
				}
				k.roundDone()
			}
			if got := k.end().Sub(dryNow); got != tt.end {
				t.Errorf("the last host is done at %s, want %s", got, tt.end)
			}
		})
	}
}
