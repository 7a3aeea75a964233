package remote

import (
	"context"
	"fmt"
	"strings"
)

// queryCaps asks each GPU's compute capability ("9.0" for Hopper, "10.0"
// for B200, "12.0" for the RTX PRO 6000): engines refuse some kernels
// outside the architectures they were written for.
const queryCaps = "--query-gpu=compute_cap --format=csv,noheader"

// ComputeCaps returns the compute capability of each GPU on h, in index
// order, as nvidia-smi writes it ("12.0"). nvidiaSMI is the command to run
// ("" = nvidia-smi). A host without GPUs answers none.
func ComputeCaps(ctx context.Context, h Host, nvidiaSMI string) ([]string, error) {
	out, _, err := h.Run(ctx, smi(nvidiaSMI)+" "+queryCaps)
	if err != nil {
		return nil, fmt.Errorf("reading the GPUs' compute capability: %w", err) // err names the host
	}
	var caps []string
	for _, line := range csvLines(out) {
		f := splitCSV(line)
		if isHeader(f) || len(f) == 0 {
			continue
		}
		c := strings.TrimSpace(f[0])
		if c == "" || strings.HasPrefix(c, "[") {
			return nil, fmt.Errorf("%s: reading the GPUs' compute capability: nvidia-smi says %q", h.Name(), shorten(line, 120))
		}
		caps = append(caps, c)
	}
	return caps, nil
}
