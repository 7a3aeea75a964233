package verdict

import (
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/results"
)

// TestEngineDiff: two runs whose preflights read different helps of the
// same engine say so; the same build, or no record in one run, says
// nothing.
func TestEngineDiff(t *testing.T) {
	b := func(host, hash, version string) results.EngineBuild {
		return results.EngineBuild{Host: host, Engine: "sglang", HelpHash: hash, Version: version, Scenarios: []string{"a"}}
	}
	tests := []struct {
		name     string
		old, new []results.EngineBuild
		want     string
	}{
		{"same build", []results.EngineBuild{b("gpu", "sha256:aaaaaaaaaaaaaaaa", "")}, []results.EngineBuild{b("gpu", "sha256:aaaaaaaaaaaaaaaa", "")}, ""},
		{"another build", []results.EngineBuild{b("gpu", "sha256:aaaaaaaaaaaaaaaa", "")}, []results.EngineBuild{b("gpu", "sha256:bbbbbbbbbbbbbbbb", "")},
			"sglang on gpu: OLD help aaaaaaaaaaaa, NEW help bbbbbbbbbbbb"},
		{"another host, another build", []results.EngineBuild{b("gpu-a", "sha256:aaaaaaaaaaaaaaaa", "0.5.19")}, []results.EngineBuild{b("gpu-b", "sha256:bbbbbbbbbbbbbbbb", "")},
			"sglang: OLD 0.5.19, help aaaaaaaaaaaa, NEW help bbbbbbbbbbbb"},
		{"no record in the old run", nil, []results.EngineBuild{b("gpu", "sha256:bbbbbbbbbbbbbbbb", "")}, ""},
		{"help not read", []results.EngineBuild{b("gpu", "", "")}, []results.EngineBuild{b("gpu", "sha256:bbbbbbbbbbbbbbbb", "")}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(EngineDiff(tt.old, tt.new), "\n"); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := EngineLines([]results.EngineBuild{b("gpu", "sha256:aaaaaaaaaaaaaaaa", "")}); len(got) != 1 || got[0] != "sglang help aaaaaaaaaaaa on gpu (a)" {
		t.Errorf("EngineLines: %q", got)
	}
}
