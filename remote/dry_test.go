package remote

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDryAnswersAsAnIdleHost: remote's own helpers work against a dry host
// as against an idle one, and everything they send is recorded.
func TestDryAnswersAsAnIdleHost(t *testing.T) {
	ctx := context.Background()
	var got []string
	d := NewDry("gpu-box", func(r DryRecord) { got = append(got, r.Line) })
	t.Cleanup(func() { d.Close() })

	if _, _, err := Platform(ctx, d); err != nil {
		t.Errorf("Platform: %v", err)
	}
	if err := WaitGPUFree(ctx, d, GPUWait{MaxUsedMiB: 1000, Timeout: time.Second, Interval: time.Millisecond}); err != nil {
		t.Errorf("WaitGPUFree: %v", err)
	}
	if ok, err := HasCommand(ctx, d, "dcgmi"); !ok || err != nil {
		t.Errorf("HasCommand = %v, %v; want the idle host to have it", ok, err)
	}
	if _, err := d.Dial(ctx, "tcp", "127.0.0.1:8000"); err == nil {
		t.Error("a port answers before any server started")
	}
	server := ProcessSpec{Command: "serve", LogFile: "/w/logs/a.log", PIDFile: "/w/server.pid"}
	if _, err := Start(ctx, d, server); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if alive, err := Alive(ctx, d, server.PIDFile); !alive || err != nil {
		t.Errorf("server Alive = %v, %v; want alive", alive, err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: d.Dial}}
	resp, err := c.Get("http://127.0.0.1:8000/health")
	if err != nil {
		t.Fatalf("health: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health status %d", resp.StatusCode)
	}

	job := ProcessSpec{Command: "sweep", LogFile: "/w/s/events.log", PIDFile: "/w/sweep.pid", ExitFile: "/w/s/exit-status"}
	if _, err := Start(ctx, d, job); err != nil {
		t.Fatalf("Start job: %v", err)
	}
	if alive, err := Alive(ctx, d, job.PIDFile); alive || err != nil {
		t.Errorf("job Alive = %v, %v; want ended", alive, err)
	}
	if started, err := Started(ctx, d, job.PIDFile); !started || err != nil {
		t.Errorf("job Started = %v, %v; want started", started, err)
	}
	if _, err := ExitStatus(ctx, d, job.ExitFile); !errors.Is(err, ErrNotRun) {
		t.Errorf("ExitStatus: %v, want ErrNotRun", err)
	}
	for _, f := range []string{job.PIDFile, server.PIDFile} {
		if err := Stop(ctx, d, f, time.Second); err != nil {
			t.Errorf("Stop %s: %v", f, err)
		}
	}
	if _, err := d.Dial(ctx, "tcp", "127.0.0.1:8000"); err == nil {
		t.Error("a port answers after the server stopped")
	}

	text := strings.Join(got, "\n")
	for _, want := range []string{"uname -s -m", "--query-gpu=index,", "exec sh -c serve", "GET http://127.0.0.1:8000/health",
		"sh -c sweep; s=$?; umask 077; echo $s > /w/s/exit-status", "rm -f /w/server.pid"} {
		if !strings.Contains(text, want) {
			t.Errorf("the record lacks %q:\n%s", want, text)
		}
	}
}

// TestDryShowsBothBranchesOfAStop: a stop on a dry host sends the stop
// script (SIGTERM, grace, SIGKILL to the process group), recorded under
// the condition a live host runs it on, and after it the removal of the
// pid file that a live host runs when nothing was running. A process the
// dry host started is named as such; any other stands for one an earlier
// run left.
func TestDryShowsBothBranchesOfAStop(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		start   bool
		wantIf  string
		wantPID int
	}{
		{"started here", true, "if the process group started with /w/server.pid still runs", DryStandInPID},
		{"left by an earlier run", false, "if /w/server.pid is left from an earlier run and names a running process group", DryStandInPID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []DryRecord
			d := NewDry("gpu-box", func(r DryRecord) { got = append(got, r) })
			t.Cleanup(func() { d.Close() })
			if tt.start {
				if _, err := Start(ctx, d, ProcessSpec{Command: "serve", LogFile: "/w/logs/a.log", PIDFile: "/w/server.pid"}); err != nil {
					t.Fatal(err)
				}
			}
			got = nil
			st, err := StopReport(ctx, d, "/w/server.pid", 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if st.PID != tt.wantPID || !slices.Equal(st.Signals, []string{"TERM"}) {
				t.Errorf("StopReport = %+v, want pid %d and SIGTERM alone", st, tt.wantPID)
			}
			if len(got) != 3 {
				t.Fatalf("%d records, want the snapshot, the stop script and the removal: %+v", len(got), got)
			}
			snap, script, rm := got[0], got[1], got[2]
			if snap.If != "" || snap.Stops != "/w/server.pid" || !hasHelper(snap, "procs") || !strings.Contains(snap.Line, statCall) {
				t.Errorf("the snapshot: %+v", snap)
			}
			for _, want := range []string{"g=4243;", "grace=300;", "pidfile=/w/server.pid", `kill -s TERM -- "-$g"`, `kill -s KILL -- "-$g"`} {
				if !strings.Contains(script.Line, want) {
					t.Errorf("the stop script lacks %q:\n%s", want, script.Line)
				}
			}
			if script.If != tt.wantIf || !hasHelper(script, "stop") {
				t.Errorf("the stop script's condition %q, helpers %v; want %q and the stop script", script.If, script.Helpers, tt.wantIf)
			}
			if rm.Line != "rm -f /w/server.pid" || rm.If != "otherwise" {
				t.Errorf("after the stop script: %+v, want the pid file's removal, otherwise", rm)
			}
			if alive, err := Alive(ctx, d, "/w/server.pid"); alive || err != nil {
				t.Errorf("Alive after the stop = %v, %v", alive, err)
			}
		})
	}
}

func hasHelper(r DryRecord, tag string) bool {
	return slices.ContainsFunc(r.Helpers, func(h DryHelper) bool { return h.Tag == tag && strings.Contains(r.Line, h.Text) })
}

// TestDryStartWrapper: a start is recorded with its spec and the script
// with the spec's values named; two servers share that wrapper, a job (with
// an exit status file) has its own, and the values put back give the
// script as sent.
func TestDryStartWrapper(t *testing.T) {
	ctx := context.Background()
	var got []DryRecord
	d := NewDry("gpu-box", func(r DryRecord) {
		if r.Start != nil {
			got = append(got, r)
		}
	})
	t.Cleanup(func() { d.Close() })
	specs := []ProcessSpec{
		{Command: "env -- A=1 serve --port 30000 'it''s'", Dir: "/data/w", LogFile: "/data/w/logs/a.log", PIDFile: "/data/w/server.pid"},
		{Command: "env -- A=2 serve --port 30000", Dir: "/data/w", LogFile: "/data/w/logs/b.log", PIDFile: "/data/w/server.pid"},
		{Command: "umask 077; sweep --out /data/w/sweeps/a/r.jsonl", Dir: "/data/w", LogFile: "/data/w/sweeps/a/events.log",
			PIDFile: "/data/w/sweep.pid", ExitFile: "/data/w/sweeps/a/exit-status"},
	}
	for _, p := range specs {
		if _, err := Start(ctx, d, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d starts recorded, want 3", len(got))
	}
	for i, r := range got {
		if r.Start.Spec.Command != specs[i].Command {
			t.Errorf("start %d: spec %+v, want %+v", i, r.Start.Spec, specs[i])
		}
		if strings.Contains(r.Start.Wrapper, "/data/w") {
			t.Errorf("start %d: the wrapper still holds a value:\n%s", i, r.Start.Wrapper)
		}
		if back := fillWrapper(r.Start.Wrapper, specs[i]); back != r.Line {
			t.Errorf("start %d: the wrapper with its values is\n%s\nwant the script sent:\n%s", i, back, r.Line)
		}
	}
	if got[0].Start.Wrapper != got[1].Start.Wrapper {
		t.Errorf("two servers have different wrappers:\n%s\n%s", got[0].Start.Wrapper, got[1].Start.Wrapper)
	}
	if got[0].Start.Wrapper == got[2].Start.Wrapper {
		t.Error("a job has a server's wrapper")
	}
}

// fillWrapper puts p's values back into a wrapper, as a reader does.
func fillWrapper(w string, p ProcessSpec) string {
	inner := func(s string) string { return strings.ReplaceAll(s, "'", `'\''`) }
	for _, v := range []struct{ name, v string }{
		{"«pid file's dir»", path.Dir(p.PIDFile)}, {"«log's dir»", path.Dir(p.LogFile)}, {"«dir»", p.Dir},
		{"«log»", p.LogFile}, {"«pid file»", p.PIDFile}, {"«exit file»", p.ExitFile},
	} {
		w = strings.ReplaceAll(w, v.name, QuotePath(v.v))
	}
	return strings.ReplaceAll(w, "«command»", inner(Quote(p.Command)))
}

// TestShowBranch: a dry host records a branch a caller shows, under its
// condition.
func TestShowBranch(t *testing.T) {
	var got []DryRecord
	d := NewDry("gpu-box", func(r DryRecord) { got = append(got, r) })
	t.Cleanup(func() { d.Close() })
	ShowBranch(d, "if the lock still names this run", "rm -f /w/bakeoff.lock")
	if len(got) != 1 || got[0].Line != "rm -f /w/bakeoff.lock" || got[0].If != "if the lock still names this run" {
		t.Errorf("records %+v", got)
	}
}
