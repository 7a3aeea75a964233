package sim

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

// TestNvidiaSMISymlink: invoked through a file named nvidia-smi, bakeoff
// answers as the fake nvidia-smi (how the demo and tests put it on PATH).
func TestNvidiaSMISymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "nvidia-smi")
	if err := os.Symlink(simBinary, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	cmd := exec.Command(link, "--query-gpu=index,memory.used", "--format=csv,noheader,nounits")
	cmd.Env = append(os.Environ(), gpu.SimStateEnv+"="+t.TempDir(), gpu.SimGPUsEnv+"=3")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "0, 2\n1, 2\n2, 2\n" {
		t.Errorf("got %q", out)
	}
}
