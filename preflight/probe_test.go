package preflight

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// fakeRunner answers every command with fixed output, as a host would.
type fakeRunner struct {
	stdout, stderr string
	err            error
	got            string
}

func (f *fakeRunner) Name() string { return "gpu-box" }
func (f *fakeRunner) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	f.got = cmd
	return []byte(f.stdout), []byte(f.stderr), f.err
}

func TestProbe(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "sglang-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	goUsage := "bakeoff sim [SGLang flags] [--sim-… flags]\n\nSim knobs:\n  --sim-speed X  run faster\n"
	exit := errors.New("exit status 1")
	tests := []struct {
		name   string
		r      *fakeRunner
		want   string // "ok", "command" or "unreadable"
		output string // what a command error shows of the output
	}{
		{"a help on stdout", &fakeRunner{stdout: string(help), stderr: "a warning an import printed\n"}, "ok", ""},
		{"not installed", &fakeRunner{stderr: "/usr/bin/python3: No module named sglang.launch_server\n", err: exit}, "command",
			"No module named sglang.launch_server"},
		{"a wrapper's usage on stderr, exit 0", &fakeRunner{stderr: goUsage}, "unreadable", ""},
		{"nothing at all", &fakeRunner{}, "unreadable", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Probe(context.Background(), tt.r, Call{Command: "env -- python3 -m sglang.launch_server --help",
				Dir: "/data/my work", Format: engine.HelpArgparse})
			if tt.r.got != "cd '/data/my work' && env -- python3 -m sglang.launch_server --help" {
				t.Errorf("ran %q", tt.r.got)
			}
			var ce *CommandError
			var ue *UnreadableError
			switch tt.want {
			case "ok":
				if err != nil || h.Table.Lookup("--tp-size") == nil || !strings.HasPrefix(h.Hash, "sha256:") || h.Host != "gpu-box" {
					t.Fatalf("got %+v, %v", h, err)
				}
			case "command":
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), "on gpu-box failed: env -- python3 -m sglang.launch_server --help") ||
					!strings.Contains(err.Error(), tt.output) {
					t.Fatalf("got %v", err)
				}
			case "unreadable":
				if !errors.As(err, &ue) || !errors.Is(err, ErrNotHelp) {
					t.Fatalf("got %v", err)
				}
			}
		})
	}
}

// TestProbeHash: the same help hashes the same, another build's differs.
func TestProbeHash(t *testing.T) {
	help, _ := os.ReadFile(filepath.Join("testdata", "sglang-help.txt"))
	probe := func(text string) string {
		h, err := Probe(context.Background(), &fakeRunner{stdout: text}, Call{Command: "x", Format: engine.HelpArgparse})
		if err != nil {
			t.Fatal(err)
		}
		return h.Hash
	}
	a, b := probe(string(help)), probe(string(help))
	c := probe(strings.Replace(string(help), "--enable-symm-mem", "--enable-symm-memory", 1))
	if a != b || a == c {
		t.Errorf("hashes %s %s %s", a, b, c)
	}
}

// TestFusionOnGPUs: SGLang's FlashInfer allreduce fusion on GPUs it refuses.
func TestFusionOnGPUs(t *testing.T) {
	tests := []struct {
		words string
		caps  []string
		want  bool
	}{
		{"--tp 8 --enable-flashinfer-allreduce-fusion", []string{"12.0", "12.0"}, true},
		{"--flashinfer-allreduce-fusion-backend auto", []string{"12.0"}, true},
		{"--flashinfer-allreduce-fusion-backend=mnnvl", []string{"8.9"}, true},
		{"--enable-flashinfer-allreduce-fusion", []string{"9.0"}, false},
		{"--enable-flashinfer-allreduce-fusion", []string{"10.0", "10.3"}, false},
		{"--enable-flashinfer-allreduce-fusion", nil, false},
		{"--enable-flashinfer-allreduce-fusion --enforce-disable-flashinfer-allreduce-fusion", []string{"12.0"}, false},
		{"--flashinfer-allreduce-fusion-backend none", []string{"12.0"}, false},
		{"--tp 8", []string{"12.0"}, false},
	}
	for _, tt := range tests {
		fs := FusionOnGPUs(strings.Fields(tt.words), tt.caps, false)
		if (len(fs) > 0) != tt.want {
			t.Errorf("%s on %v: %+v", tt.words, tt.caps, fs)
		}
		// SGLang refuses to start after loading the model: an error,
		// before the first launch, saying how to turn fusion off.
		if len(fs) > 0 && (fs[0].Severity != Error || !strings.Contains(fs[0].Text, "requires SM90 or SM10X") ||
			!strings.Contains(fs[0].Text, "--enforce-disable-flashinfer-allreduce-fusion")) {
			t.Errorf("%+v", fs[0])
		}
		// Acknowledged, the same finding only warns.
		ack := FusionOnGPUs(strings.Fields(tt.words), tt.caps, true)
		if (len(ack) > 0) != tt.want || len(ack) > 0 && ack[0].Severity != Warning {
			t.Errorf("%s on %v acknowledged: %+v", tt.words, tt.caps, ack)
		}
	}
}

// byCommand answers each command with the output of the first key it
// contains: a host whose engine prints its help and its version.
type byCommand map[string]string

func (b byCommand) Name() string { return "gpu-box" }
func (b byCommand) Run(_ context.Context, cmd string) ([]byte, []byte, error) {
	for k, out := range b {
		if strings.Contains(cmd, k) {
			// llama.cpp prints its help on stdout, its version on stderr.
			if k == "--version" {
				return nil, []byte(out), nil
			}
			return []byte(out), nil, nil
		}
	}
	return nil, nil, errors.New("exit status 1")
}

// TestProbeVersion: llama.cpp's --version, as its build_info writes it; a
// version command that fails leaves the version unknown, not the help.
func TestProbeVersion(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "llama-server-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	call := Call{Command: "env -- llama-server --help", VersionCommand: "env -- llama-server --version", Format: engine.HelpLlamaCpp}
	h, err := Probe(context.Background(), byCommand{"--help": string(help), "--version": "version: 6890 (5eca4e3ca)\nbuilt with cc for x86_64\n"}, call)
	if err != nil || h.Version != "b6890-5eca4e3ca" || h.Table.Version != h.Version {
		t.Errorf("got %+v, %v", h, err)
	}
	h, err = Probe(context.Background(), byCommand{"--help": string(help)}, call)
	if err != nil || h.Version != "" {
		t.Errorf("a failed version call: %+v, %v", h, err)
	}
}
