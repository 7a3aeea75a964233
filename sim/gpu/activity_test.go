package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestActivityUtilization(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int64) int64 { return t0.UnixNano() + n*int64(time.Millisecond) }
	tests := []struct {
		name  string
		marks [][2]int64
		now   time.Time
		want  float64
	}{
		{"busy all the last second", [][2]int64{{ms(0), 0}, {ms(1000), 1e9}, {ms(1500), 15e8}}, t0.Add(1500 * time.Millisecond), 1},
		{"busy a quarter", [][2]int64{{ms(0), 0}, {ms(500), 0}, {ms(1000), 25e7}}, t0.Add(time.Second), 0.25},
		// Only the last second counts: an earlier busy spell is forgotten.
		{"busy before the window", [][2]int64{{ms(0), 0}, {ms(500), 5e8}, {ms(1500), 5e8}}, t0.Add(1500 * time.Millisecond), 0},
		{"a stopped server", [][2]int64{{ms(0), 0}, {ms(100), 1e8}}, t0.Add(3 * time.Second), 0},
		{"one mark", [][2]int64{{ms(0), 0}}, t0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Activity{Marks: tt.marks}.Utilization(tt.now)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Utilization = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestNvidiaSMIPower: a GPU an engine keeps busy reads the model's full
// power and boost clock, the others idle; the timestamp is in $TZ; -lms
// repeats the query until the context ends.
func TestNvidiaSMIPower(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 3, 0, 0, 123e6, time.UTC)
	a := Activity{PID: os.Getpid(), GPUs: []int{1}, Marks: [][2]int64{
		{now.Add(-1500 * time.Millisecond).UnixNano(), 0}, {now.UnixNano(), int64(1500 * time.Millisecond)}}}
	b, _ := json.Marshal(a)
	if err := os.WriteFile(activityPath(dir, a.PID), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{SimStateEnv: dir, SimGPUsEnv: "2", "TZ": "UTC"}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	smi := SMIEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		Now: func() time.Time {
			// The third query ends the loop.
			if n++; n == 3 {
				cancel()
			}
			return now
		}}
	code := NvidiaSMI(ctx, strings.Fields("--query-gpu=timestamp,index,power.draw,utilization.gpu,memory.used,clocks.sm --format=csv,noheader,nounits -lms 10"), smi)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	one := "2026/12/01 03:00:00.123, 0, 30.00, 0, 2, 210\n2026/12/01 03:00:00.123, 1, 600.00, 100, 2, 2430\n"
	if want := strings.Repeat(one, 3); out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if ModelPowerW(0.5) != GPUIdleW+(GPUMaxW-GPUIdleW)/2 {
		t.Errorf("ModelPowerW(0.5) = %v", ModelPowerW(0.5))
	}
}

// TestRecordActivityRestsWhenIdle: an engine with no work has its file
// written until it shows a window without work, then left alone (the same
// file, no rename) while the engine stays idle; work writes it again, and
// every reading on the way is what the engine did.
func TestRecordActivityRestsWhenIdle(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var busy time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		RecordActivity(ctx, dir, os.Getpid(), []int{0}, 20, func() time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return busy
		}, time.Now)
	}()
	defer func() { cancel(); <-done }()
	path := activityPath(dir, os.Getpid())
	stat := func() os.FileInfo {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	util := func() float64 {
		t.Helper()
		a, err := LiveActivity(dir, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return a[0].Util
	}
	// waitRest waits until the file stays the same file for five ticks.
	waitRest := func() os.FileInfo {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			before := stat()
			time.Sleep(5 * minActivityTick)
			if os.SameFile(before, stat()) {
				return before
			}
		}
		t.Fatal("the activity file of an idle engine is still being rewritten after 20 s")
		return nil
	}
	for !fileExists(path) {
		time.Sleep(minActivityTick)
	}
	rest := waitRest()
	if u := util(); u != 0 {
		t.Errorf("idle engine at rest: utilisation %v, want 0", u)
	}
	time.Sleep(10 * minActivityTick)
	if !os.SameFile(rest, stat()) {
		t.Error("an idle engine's file was rewritten after it showed a window without work")
	}
	// Work: the engine is busy for a while, and the file shows it.
	stop := time.Now().Add(time.Second)
	for time.Now().Before(stop) && util() == 0 {
		mu.Lock()
		busy += 10 * time.Millisecond
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	if u := util(); u == 0 {
		t.Fatal("a busy engine's utilisation still reads 0 after a second of work")
	}
	mu.Lock()
	total := busy
	mu.Unlock()
	waitRest()
	a, err := LiveActivity(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a[0].Util != 0 || a[0].Busy != total {
		t.Errorf("idle again at rest: %+v, want utilisation 0 and busy %v", a[0], total)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
