package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
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
