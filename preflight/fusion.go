package preflight

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/campaign"
	"slices"
	"strconv"
	"strings"
)

// SGLang's FlashInfer allreduce fusion runs on SM90 and SM10x only:
// python/sglang/srt/layers/flashinfer_comm_fusion.py (_resolve_backend)
// raises "FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs."
// when neither is_sm90_supported nor is_sm100_supported (compute capability
// major 10) holds, and --enable-flashinfer-allreduce-fusion, deprecated,
// now sets --flashinfer-allreduce-fusion-backend=auto
// (arg_groups/overrides.py _handle_deprecated_args). Older builds took the
// flag on any GPU. docs/ENGINES.md keeps the versions.
const (
	fusionFlag    = "--enable-flashinfer-allreduce-fusion"
	fusionBackend = "--flashinfer-allreduce-fusion-backend"
	fusionOff     = "--enforce-disable-flashinfer-allreduce-fusion"
)

// AckFusion is the word a campaign's engine.acknowledge lists to run
// FlashInfer allreduce fusion on GPUs SGLang refuses it on (a build patched
// to allow it): the finding is then a warning.
const AckFusion = campaign.AckFusionOnGPU

// FusionOnGPUs returns an error when words (an SGLang scenario's rendered
// flags) turn FlashInfer allreduce fusion on and a GPU of caps (nvidia-smi's
// compute_cap, "12.0") is neither SM90 nor SM10x: current SGLang then
// refuses to start, after the model has loaded, and a night would learn it
// ten minutes into every launch. Acknowledged (AckFusion), it is a
// warning. No GPUs, no finding.
func FusionOnGPUs(words []string, caps []string, acknowledged bool) []Finding {
	at, flag := -1, ""
	for i, w := range words {
		name, inline, hasInline := strings.Cut(w, "=")
		switch name {
		case fusionOff:
			return nil
		case fusionFlag:
			at, flag = i, w
		case fusionBackend:
			v := inline
			if !hasInline && i+1 < len(words) {
				v = words[i+1]
			}
			if v != "none" && v != "off" && v != "" {
				at, flag = i, name+" "+v
			}
		}
	}
	if at < 0 {
		return nil
	}
	var bad []string
	for _, c := range caps {
		if !fusionSupported(c) {
			bad = append(bad, c)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	bad = slices.Compact(bad)
	f := Finding{Severity: Error, Kind: GPU, Word: at, Flag: flag, Suggest: fusionOff,
		Text: fmt.Sprintf("%s turns FlashInfer allreduce fusion on, and this host's GPUs are compute capability %s: current SGLang refuses to start (\"FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.\"); leave it out, write %s, or, for a build that runs it there, acknowledge it with engine.acknowledge: [%s]",
			flag, strings.Join(bad, ", "), fusionOff, AckFusion)}
	if acknowledged {
		f.Severity = Warning
		f.Text = fmt.Sprintf("%s turns FlashInfer allreduce fusion on, and this host's GPUs are compute capability %s, where current SGLang refuses to start; run anyway, as engine.acknowledge: [%s] asks",
			flag, strings.Join(bad, ", "), AckFusion)
	}
	return []Finding{f}
}

// fusionSupported is SGLang's is_sm90_supported or is_sm100_supported: 9.0,
// or major 10.
func fusionSupported(cc string) bool {
	major, minor, _ := strings.Cut(strings.TrimSpace(cc), ".")
	m, err := strconv.Atoi(major)
	if err != nil {
		return true // not a capability: nothing to say
	}
	return m == 10 || (m == 9 && minor == "0")
}
