package cmdline

import "github.com/bakeoff-dev/bakeoff/sim/gpu"

// FlashInfer allreduce fusion as SGLang decides it at startup, and what it
// costs the performance model (model.go: noFusionAllreduce).
//
//   - --flashinfer-allreduce-fusion-backend B asks for it; the deprecated
//     --enable-flashinfer-allreduce-fusion means backend auto (resolve.go).
//   - Asked for on a GPU that is neither SM90 nor SM10x, the server refuses
//     to start: "FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA
//     GPUs." (python/sglang/srt/layers/flashinfer_comm_fusion.py,
//     _resolve_backend; is_sm100_supported is compute capability major 10,
//     so the RTX PRO 6000's SM120 is refused).
//   - Not asked for, SGLang turns it on by itself for the models it supports
//     (the DeepSeek-V3 family, which Kimi-K2.5 is) with tp > 1 on SM90 and
//     SM10x, unless DP attention is on (python/sglang/srt/arg_groups/
//     overrides.py, _flashinfer_allreduce_fusion_auto_enable).
//   - --enforce-disable-flashinfer-allreduce-fusion keeps it off, asked for
//     or not.

// FusionError is the ValueError SGLang raises for fusion on another GPU.
const FusionError = "FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs."

// fusionGPU reports whether SGLang's FlashInfer allreduce fusion runs on a
// GPU of compute capability cc: SM90 or SM10x.
func fusionGPU(cc string) bool {
	major, err := gpu.CapMajor(cc)
	return err == nil && (major == 9 || major == 10)
}

// fusionAsked reports whether the command line asks for fusion.
func (c *Config) fusionAsked() bool {
	return !c.EnforceDisableFusion && c.FusionBackend != ""
}

// FusionRefused reports whether SGLang refuses to start: fusion asked for on
// a GPU that cannot run it.
func (c *Config) FusionRefused() bool {
	return c.fusionAsked() && !fusionGPU(c.Sim.ComputeCap)
}

// AllreduceFusion reports whether the server runs with FlashInfer allreduce
// fusion: asked for, or turned on by SGLang itself, on a GPU that runs it.
func (c *Config) AllreduceFusion() bool {
	if c.EnforceDisableFusion || !fusionGPU(c.Sim.ComputeCap) {
		return false
	}
	return c.fusionAsked() || (c.TP > 1 && !c.EnableDPAttention)
}

// EffectiveFusionBackend is flashinfer_allreduce_fusion_backend as the
// resolved server args report it: the backend asked for, "auto" when SGLang
// turned fusion on by itself, nil when off.
func (c *Config) EffectiveFusionBackend() any {
	switch {
	case !c.AllreduceFusion():
		return nil
	case c.FusionBackend != "":
		return c.FusionBackend
	default:
		return "auto"
	}
}
