package cmdline

import (
	"slices"
	"strings"
)

// resolve does what SGLang does to the parsed flags when it builds its
// server args, for the flags the sim reads, and keeps the warnings SGLang
// logs there as Notices (Run logs them):
//
//   - the deprecated --enable-flashinfer-allreduce-fusion becomes backend
//     auto, with SGLang's warning, unless a backend is given (then it is
//     dropped without a word); python/sglang/srt/arg_groups/overrides.py,
//     handle_deprecated_args;
//   - SGLANG_ENABLE_SPEC_V2, set to any value, only gets the notice that it
//     is gone; python/sglang/srt/arg_groups/speculative_hook.py,
//     handle_speculative_decoding;
//   - the speculative algorithm is read in upper case, NEXTN as EAGLE's
//     alias keeps its name here (the model treats every algorithm alike);
//   - --speculative-adaptive is kept, dropped with SGLang's warning, or
//     refused with the exception SGLang raises (adaptive.go).
func resolve(c *Config, getenv func(string) string) {
	if c.EnableFusionDeprecated && c.FusionBackend == "" {
		c.Notices = append(c.Notices, "--enable-flashinfer-allreduce-fusion is deprecated. Please use --flashinfer-allreduce-fusion-backend=auto instead.")
		c.FusionBackend = "auto"
	}
	if getenv(SpecV2Env) != "" {
		c.Notices = append(c.Notices, "SGLANG_ENABLE_SPEC_V2 has been removed: speculative decoding always runs the V2 worker. Use --disable-overlap-schedule to select the non-overlap (synchronous) path.")
	}
	c.SpecAlgorithm = strings.ToUpper(c.SpecAlgorithm)
	resolveAdaptive(c)
}

// UnknownSpecAlgorithm is SGLang's startup error for an algorithm it does
// not know (python/sglang/srt/speculative/spec_info.py, from_string), or ""
// when the algorithm is one of its builtins or none is given.
func (c *Config) UnknownSpecAlgorithm() string {
	if c.SpecAlgorithm == "" || slices.Contains(specAlgorithms, c.SpecAlgorithm) {
		return ""
	}
	return "Unknown speculative algorithm name: " + c.Given["speculative_algorithm"]
}
