package noise

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestRecordKeepsNewest: observations accumulate per key, a run measured
// again replaces its own, only the newest DefaultKeep are pooled, and keys
// do not share a file.
func TestRecordKeepsNewest(t *testing.T) {
	root := t.TempDir()
	key := Key{Host: "gpu-01.lab:22", Engine: "sglang", Model: "moonshotai/Kimi-K2.5", Sweep: "sha256:0123456789ab"}
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	for i := range DefaultKeep + 2 {
		o := Observation{Run: fmt.Sprintf("c/run-%d", i), At: t0.Add(time.Duration(i) * 24 * time.Hour),
			Var: float64(i+1) * 1e-4, DF: 10}
		if err := Record(root, key, o); err != nil {
			t.Fatal(err)
		}
	}
	// run-6 again, as a resume measures it: replaced, not added.
	if err := Record(root, key, Observation{Run: "c/run-6", At: t0.Add(6 * 24 * time.Hour), Var: 7e-4, DF: 20}); err != nil {
		t.Fatal(err)
	}
	p, err := Load(root, key)
	if err != nil || p == nil {
		t.Fatalf("Load: %v, %v", p, err)
	}
	var runs []string
	for _, o := range p.Observations {
		runs = append(runs, o.Run)
	}
	if want := []string{"c/run-2", "c/run-3", "c/run-4", "c/run-5", "c/run-6"}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want the newest %d: %v", runs, DefaultKeep, want)
	}
	v, df, pooledRuns, ok := p.Pooled()
	// (3+4+5+6)·10 + 7·20 over 60 df, ×1e-4.
	if want := (180e-4 + 140e-4) / 60; !ok || math.Abs(v-want) > 1e-12 || df != 60 || len(pooledRuns) != 5 {
		t.Errorf("pooled %v df %v runs %v ok %v; want %v, 60, 5 runs", v, df, pooledRuns, ok, want)
	}
	for _, other := range []Key{
		{Host: "gpu-02", Engine: "sglang", Model: "moonshotai/Kimi-K2.5", Sweep: "sha256:0123456789ab"},
		{Host: "gpu-01.lab:22", Engine: "sglang", Model: "moonshotai/Kimi-K2.5", Sweep: "sha256:ba9876543210"},
	} {
		if p, err := Load(root, other); p != nil || err != nil {
			t.Errorf("%s: %v, %v; want no profile", other, p, err)
		}
	}
	if fi, err := os.Stat(Path(root, key)); err != nil || filepath.Dir(Path(root, key)) != filepath.Join(root, Dir) {
		t.Errorf("profile file %s: %v %v", Path(root, key), fi, err)
	}
	if got := filepath.Base(Path(root, key)); got != "gpu-01.lab_22--sglang--moonshotai_Kimi-K2.5--0123456789ab.json" {
		t.Errorf("file name %q", got)
	}
}

// TestLoadCorrupt: a damaged profile is an error that names it, not an
// empty profile (which would silently discard the history).
func TestLoadCorrupt(t *testing.T) {
	root := t.TempDir()
	key := Key{Host: "h", Engine: "e", Model: "m"}
	if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(root, key), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(root, key); err == nil {
		t.Fatal("a torn profile read without an error")
	}
}
