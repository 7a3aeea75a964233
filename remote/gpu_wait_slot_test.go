package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitGPUFreeIndices: a launch that shares its host waits for its own
// GPUs only, whatever the others hold and whichever processes hold it.
func TestWaitGPUFreeIndices(t *testing.T) {
	script := filepath.Join(t.TempDir(), "nvidia-smi")
	// Four GPUs, the first two held by another slot's server.
	body := `#!/bin/sh
case "$*" in
*query-compute-apps*) echo "4242, python3, 40000" ;;
*) printf '0, NVIDIA H100, 40000, 81559\n1, NVIDIA H100, 40000, 81559\n2, NVIDIA H100, 0, 81559\n3, NVIDIA H100, 3, 81559\n' ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h := NewLocal()
	w := GPUWait{NvidiaSMI: script, MaxUsedMiB: 1024, Timeout: 300 * time.Millisecond, Interval: 10 * time.Millisecond}
	if err := WaitGPUFree(context.Background(), h, w); err == nil {
		t.Fatal("the whole host counted as free while GPUs 0 and 1 are held")
	}
	w.Indices = []int{2, 3}
	if err := WaitGPUFree(context.Background(), h, w); err != nil {
		t.Errorf("GPUs 2 and 3 are free: %v", err)
	}
	w.Indices = []int{1, 2}
	var busy *GPUBusyError
	if err := WaitGPUFree(context.Background(), h, w); !errors.As(err, &busy) || !strings.Contains(err.Error(), "GPU 1 uses 40000 MiB") || strings.Contains(err.Error(), "GPU 0") {
		t.Errorf("GPUs 1 and 2: %v, want GPU 1 named busy and GPU 0 left out", err)
	}
	w.Indices = []int{4, 5}
	if err := WaitGPUFree(context.Background(), h, w); err == nil || !strings.Contains(err.Error(), "lists 0 of GPUs [4 5]") {
		t.Errorf("GPUs the host does not have: %v", err)
	}
}
