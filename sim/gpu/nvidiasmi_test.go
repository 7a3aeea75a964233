package gpu

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	return cmd.Process.Pid
}

func TestNvidiaSMIGolden(t *testing.T) {
	me := os.Getpid()
	live := []Holder{
		{PID: me, GPU: 0, MiB: 88150, Name: "sglang::scheduler_TP0"},
		{PID: me, GPU: 1, MiB: 88150, Name: "sglang::scheduler_TP1"},
	}
	tests := []struct {
		name    string
		args    string
		gpus    string
		holders []Holder
		code    int
	}{
		{"idle-noheader-nounits", "--query-gpu=index,name,memory.used,memory.total --format=csv,noheader,nounits", "", nil, 0},
		{"idle-csv", "--query-gpu=index,name,memory.used,memory.total --format=csv", "", nil, 0},
		{"busy-index-used", "--query-gpu=index,memory.used --format=csv,noheader,nounits", "", live, 0},
		{"busy-csv-two-gpus", "--query-gpu=index,name,memory.used,memory.total --format=csv", "2", live, 0},
		{"driver", "--query-gpu=driver_version,name --format=csv,noheader", "", nil, 0},
		{"apps-none", "--query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits", "", nil, 0},
		{"apps-none-header", "--query-compute-apps=pid,process_name,used_memory --format=csv", "", nil, 0},
		{"apps", "--query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits", "", live, 0},
		{"apps-csv", "--query-compute-apps=pid,process_name,used_memory --format=csv", "", live, 0},
		{"bad-field", "--query-gpu=index,memory.usedd --format=csv", "", nil, 2},
		{"bad-format", "--query-gpu=index --format=json", "", nil, 2},
		{"list", "-L", "2", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// Distinct holder files need distinct pids; the name carries the
			// pid, so give each a fake file name but a live pid inside.
			for i, h := range tt.holders {
				b := []byte(`{"pid":` + strconv.Itoa(h.PID) + `,"gpu":` + strconv.Itoa(h.GPU) + `,"mib":` + strconv.Itoa(h.MiB) + `,"name":"` + h.Name + `"}`)
				if err := os.WriteFile(filepath.Join(dir, HolderPrefix+"x"+strconv.Itoa(i)+".json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{SimStateEnv: dir, SimGPUsEnv: tt.gpus}
			var out, errb bytes.Buffer
			code := NvidiaSMI(context.Background(), strings.Fields(tt.args), SMIEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			got := strings.ReplaceAll(out.String()+errb.String(), strconv.Itoa(me)+",", "PID,")
			golden.Check(t, filepath.Join("testdata", "nvidia-smi", tt.name+".txt"), []byte(got))
		})
	}
}

// TestNvidiaSMIComputeCap: compute_cap is the RTX PRO 6000's 12.0 unless
// BAKEOFF_SIM_COMPUTE_CAP says otherwise, as a preflight reads it to know
// which GPUs SGLang's fusion runs on.
func TestNvidiaSMIComputeCap(t *testing.T) {
	tests := []struct {
		name, cap string
		code      int
	}{
		{"compute-cap", "", 0},
		{"compute-cap-sm90", "9.0", 0},
		{"compute-cap-bad", "twelve", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{SimStateEnv: t.TempDir(), SimGPUsEnv: "2", SimComputeCapEnv: tt.cap}
			var out, errb bytes.Buffer
			code := NvidiaSMI(context.Background(), []string{"--query-gpu=index,name,compute_cap", "--format=csv"},
				SMIEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			golden.Check(t, filepath.Join("testdata", "nvidia-smi", tt.name+".txt"), []byte(out.String()+errb.String()))
		})
	}
}

func TestLiveHoldersDeadAndHeld(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	now := time.Now()
	if err := WriteHolder(dir, Holder{PID: dead, GPU: 0, MiB: 100, Name: "gone"}); err != nil {
		t.Fatal(err)
	}
	hs, err := LiveHolders(dir, now)
	if err != nil || len(hs) != 0 {
		t.Fatalf("a dead holder counted: %v %v", hs, err)
	}
	if _, err := os.Stat(holderPath(dir, dead)); !os.IsNotExist(err) {
		t.Error("a dead holder's file was not cleaned up")
	}
	// A dead holder with a hold time counts until the hold ends, timed from
	// when it is first seen dead.
	WriteHolder(dir, Holder{PID: dead, GPU: 1, MiB: 200, Name: "held", HoldFor: time.Second})
	if hs, _ := LiveHolders(dir, now); len(hs) != 1 {
		t.Fatalf("held memory not reported: %v", hs)
	}
	if hs, _ := LiveHolders(dir, now.Add(900*time.Millisecond)); len(hs) != 1 {
		t.Fatalf("held memory released early: %v", hs)
	}
	if hs, _ := LiveHolders(dir, now.Add(1100*time.Millisecond)); len(hs) != 0 {
		t.Fatalf("held memory reported after its hold: %v", hs)
	}
}
