package soak

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadSampleSelf(t *testing.T) {
	before, err := ReadSample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.RSSKiB <= 0 || before.HWMKiB < before.RSSKiB || before.FDs < 3 || before.Threads < 1 {
		t.Fatalf("implausible sample of this process: %+v", before)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadSample(os.Getpid())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if after.FDs <= before.FDs {
		t.Errorf("an open file did not count: %d fds before, %d after", before.FDs, after.FDs)
	}
}

func TestReadSampleGone(t *testing.T) {
	// Pids wrap far below this on Linux (pid_max is at most 2^22).
	if _, err := ReadSample(1 << 30); err == nil {
		t.Fatal("a process that does not exist read without error")
	}
}

func TestParseStatCPU(t *testing.T) {
	rest := " S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0"
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		ok         bool
	}{
		{"plain", "42 (bakeoff)" + rest, 3 * time.Second, true},
		{"spaces and parens in the name", "42 (a b) (c))" + rest, 3 * time.Second, true},
		{"no name", "42 bakeoff S 1", 0, false},
		{"short", "42 (bakeoff) S 1 2", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.stat)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseStatCPU(%q) = %v, %v; want %v (ok %v)", tc.stat, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestSamplerWritesCSV(t *testing.T) {
	var buf bytes.Buffer
	s := StartSampler(os.Getpid(), time.Millisecond, &buf)
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.mu.Lock()
		n := len(s.samples)
		s.mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(samples) < 3 || len(lines) != len(samples)+1 || lines[0] != strings.Join(CSVHeader, ",") {
		t.Fatalf("%d samples, CSV:\n%s", len(samples), buf.String())
	}
}

func TestSummarize(t *testing.T) {
	series := func(n int, f func(i int) float64) []Sample {
		var out []Sample
		for i := 0; i < n; i++ {
			out = append(out, Sample{At: time.Duration(i) * time.Second, RSSKiB: int64(f(i))})
		}
		return out
	}
	rss := func(s Sample) float64 { return float64(s.RSSKiB) }
	for _, tc := range []struct {
		name     string
		samples  []Sample
		wantRise float64
		wantMax  float64
	}{
		// A steady leak of 10 KiB a second: over the second half (50 s)
		// the fit rises 500 KiB.
		{"leak", series(101, func(i int) float64 { return 1000 + 10*float64(i) }), 500, 2000},
		// Growth in the first half, then a saw-tooth around a level: flat.
		{"warm-up then saw-tooth", series(101, func(i int) float64 {
			if i < 40 {
				return 1000 + 50*float64(i)
			}
			return 3000 + 200*float64(i%2)
		}), 0, 3200},
		{"one sample", series(1, func(int) float64 { return 7 }), 0, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.samples, rss)
			if math.Abs(s.Rise-tc.wantRise) > 5 || s.Max != tc.wantMax {
				t.Errorf("rise %.1f max %.0f, want %.0f and %.0f", s.Rise, s.Max, tc.wantRise, tc.wantMax)
			}
		})
	}
}

func TestLiveHeap(t *testing.T) {
	log := strings.Join([]string{
		"gc 1 @84.144s 0%: 0.24+4.0+0.013 ms clock, 0.49+0.051/3.3/4.2+0.027 ms cpu, 30->30->3 MB, 32 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		"06:18:14 [201/300 s001 round 3 on th-90e62b] collect ok in 0.0s",
		"gc 2 @170.5s 0%: 0.1+2+0.01 ms clock, 0.2+0/1/2+0.02 ms cpu, 31->32->4 MB, 33 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
		"gc 3 @x 0%: garbage",
	}, "\n")
	got := LiveHeap(log)
	want := []Sample{{At: 84144 * time.Millisecond, RSSKiB: 3 * 1024}, {At: 170500 * time.Millisecond, RSSKiB: 4 * 1024}}
	if len(got) != len(want) {
		t.Fatalf("LiveHeap = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].RSSKiB != want[i].RSSKiB || (got[i].At-want[i].At).Abs() > time.Millisecond {
			t.Errorf("LiveHeap[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
