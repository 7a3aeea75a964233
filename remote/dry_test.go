package remote

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDryAnswersAsAnIdleHost: remote's own helpers work against a dry host
// as against an idle one, and everything they send is recorded.
func TestDryAnswersAsAnIdleHost(t *testing.T) {
	ctx := context.Background()
	var got []string
	d := NewDry("gpu-box", func(line string) { got = append(got, line) })
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
