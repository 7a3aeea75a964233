package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseGPUs(t *testing.T) {
	eight := strings.Repeat("", 0)
	var want8 []GPU
	for i := range 8 {
		eight += strings.Join([]string{string(rune('0' + i)), "NVIDIA RTX PRO 6000 Blackwell Server Edition", "4", "97887"}, ", ") + "\n"
		want8 = append(want8, GPU{Index: i, Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", UsedMiB: 4, TotalMiB: 97887})
	}
	tests := []struct {
		name    string
		in      string
		want    []GPU
		wantErr bool
	}{
		{"h200", "0, NVIDIA H200, 0, 143771\n", []GPU{{0, "NVIDIA H200", 0, 143771}}, false},
		{"with header and units", "index, name, memory.used [MiB], memory.total [MiB]\n0, NVIDIA H200, 21099 MiB, 143771 MiB\n", []GPU{{0, "NVIDIA H200", 21099, 143771}}, false},
		{"no name column", "0, 21099, 143771\n", []GPU{{0, "", 21099, 143771}}, false},
		{"n/a", "0, NVIDIA GB10, [N/A], [N/A]\n", []GPU{{0, "NVIDIA GB10", -1, -1}}, false},
		{"empty", "", nil, false},
		{"blank lines and CRLF", "\r\n0, A, 1, 2\r\n\n", []GPU{{0, "A", 1, 2}}, false},
		{"eight", eight, want8, false},
		{"garbage", "No devices were found\n", nil, true},
		{"bad memory", "0, A, lots, 2\n", nil, true},
		{"negative", "0, A, -5, 2\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGPUs([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseGPUs(%q) error = %v; want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseGPUs(%q) = %+v; want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseComputeApps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []GPUProcess
		wantErr bool
	}{
		{"one", "445, python3, 21090\n", []GPUProcess{{445, "python3", 21090}}, false},
		{"header only", "pid, process_name, used_gpu_memory [MiB]\n", nil, false},
		{"empty", "", nil, false},
		{"no running", "No running processes found\n", nil, false},
		{"n/a and units", "pid, process_name, used_gpu_memory [MiB]\n7, VLLM::EngineCore, [N/A]\n8, /opt/venv/bin/python, 100 MiB\n",
			[]GPUProcess{{7, "VLLM::EngineCore", -1}, {8, "/opt/venv/bin/python", 100}}, false},
		{"comma in name", "9, /tmp/a, b/python, 5\n", []GPUProcess{{9, "/tmp/a, b/python", 5}}, false},
		{"short", "445, python3\n", nil, true},
		{"bad pid", "x, python3, 5\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseComputeApps([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseComputeApps(%q) error = %v; want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseComputeApps(%q) = %+v; want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseGPUs(f *testing.F) {
	for _, s := range []string{"0, NVIDIA H200, 0, 143771\n", "index, name, memory.used [MiB], memory.total [MiB]\n0, A, 1 MiB, 2 MiB\n", "0, A, [N/A], [N/A]", "", "\n\n,,,\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		gpus, err := ParseGPUs(b)
		if err != nil {
			return
		}
		for _, g := range gpus {
			if g.Index < 0 || g.UsedMiB < -1 || g.TotalMiB < -1 {
				t.Fatalf("ParseGPUs(%q) gave %+v", b, g)
			}
		}
	})
}

func FuzzParseComputeApps(f *testing.F) {
	for _, s := range []string{"445, python3, 21090\n", "pid, process_name, used_gpu_memory [MiB]\n", "No running processes found", "1, a, b, [N/A]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ParseComputeApps(b)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.PID < 0 || p.UsedMiB < -1 {
				t.Fatalf("ParseComputeApps(%q) gave %+v", b, p)
			}
		}
	})
}

func TestGPUsFree(t *testing.T) {
	tests := []struct {
		name  string
		gpus  []GPU
		procs []GPUProcess
		want  bool
	}{
		{"idle", []GPU{{0, "A", 3, 100}, {1, "A", 0, 100}}, nil, true},
		{"over", []GPU{{0, "A", 3, 100}, {1, "A", 50, 100}}, nil, false},
		{"n/a", []GPU{{0, "A", -1, -1}}, nil, true},
		{"process left", []GPU{{0, "A", 0, 100}}, []GPUProcess{{1, "x", 0}}, false},
	}
	for _, tt := range tests {
		if got := gpusFree(tt.gpus, tt.procs, 10); got != tt.want {
			t.Errorf("%s: gpusFree = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// An nvidia-smi that answers with no GPU line must stop the wait with an
// error naming the host, not let the launch through as if memory were free.
func TestWaitGPUFreeNoGPUs(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := NewLocal()
	err := WaitGPUFree(context.Background(), h, GPUWait{NvidiaSMI: script, Timeout: time.Second, Interval: 10 * time.Millisecond})
	var none *NoGPUsError
	if !errors.As(err, &none) {
		t.Fatalf("WaitGPUFree with an empty nvidia-smi = %v; want *NoGPUsError", err)
	}
	for _, want := range []string{h.Name(), script, "listed no GPUs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
