package orchestrator

import (
	"slices"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/remote"
)

func TestPowerLog(t *testing.T) {
	tests := []struct {
		name        string
		out         string
		gpus        []int
		unavailable string
	}{
		{"the GPUs holding memory count", "2026/12/01 03:00:00.000, 0, 30.1, 0, 2, 210\n" +
			"2026/12/01 03:00:00.000, 1, 580.5, 100, 88150, 2430\n2026/12/01 03:00:00.000, 2, 590.0, 100, 88150, 2430\n",
			[]int{1, 2}, ""},
		{"no GPU holds memory: all count", "2026/12/01 03:00:00.000, 0, 30.1, 0, 2, 210\n2026/12/01 03:00:00.000, 1, 31.0, 0, 3, 210\n",
			[]int{0, 1}, ""},
		{"memory not reported: all count", "2026/12/01 03:00:00.000, 0, 300, 90, [N/A], 2430\n2026/12/01 03:00:00.000, 1, 31.0, 0, [N/A], 210\n",
			[]int{0, 1}, ""},
		{"power [N/A]", "2026/12/01 03:00:00.000, 0, [N/A], 100, 88150, 2430\n2026/12/01 03:00:00.500, 0, [N/A], 100, 88150, 2430\n",
			[]int{0}, "[N/A]"},
		{"power [Not Supported] on the server's GPU only", "2026/12/01 03:00:00.000, 0, [Not Supported], 100, 88150, 2430\n2026/12/01 03:00:00.000, 1, 30, 0, 2, 210\n",
			[]int{0}, "[N/A]"},
		{"no reading", "", nil, "no reading"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, _, _ := powerLog([]byte(tt.out), remote.PowerNvidiaSMI, 500, 1024)
			if !slices.Equal(log.GPUs, tt.gpus) {
				t.Errorf("GPUs %v (%s), want %v", log.GPUs, log.GPUsFrom, tt.gpus)
			}
			if (tt.unavailable == "") != (log.Unavailable == "") || !strings.Contains(log.Unavailable, tt.unavailable) {
				t.Errorf("Unavailable %q, want %q", log.Unavailable, tt.unavailable)
			}
		})
	}
}
