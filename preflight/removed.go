package preflight

import (
	"fmt"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// removal is a flag an engine removed, with what the engine's own source
// says to write instead.
type removal struct {
	flag string
	// replacement is the flag to write instead; how, in the engine's own
	// words, how to set it.
	replacement, how string
}

// removedFlags are, by engine, flags that current builds no longer list
// and refuse as unrecognized, whose replacement their help no longer names.
// The closest spelling by edit distance is then another option altogether
// (--enable-ep-moe's is --enable-metrics), so these are looked up first.
//
// SGLang's MoE switches: docs/references/deprecated_items.md of
// sgl-project/sglang at commit d5fd0ab277c5c0d2cd4ce64ba8888fa71e11b26a
// ("Deprecated Server Arguments", MoE Runner Backend Arguments) names each
// one's replacement, as the deprecation warnings of server_args.py did
// ("NOTE: --enable-ep-moe is deprecated. Please set `--ep-size` to the same
// value as `--tp-size` instead."). None is registered any more: not among
// ServerArgs.add_cli_args' deprecated registrations in
// python/sglang/srt/server_args.py at commit
// 001067fffe33427bee0ed2f007fb7551a1d76b44, not a field of
// arg_groups/fields/parallel.py at commit
// 00ac7105db02776e90962fc6bb311d20dffe87ae (whose expert parallelism is
// --ep-size, --expert-parallel-size, --ep), so argparse refuses them:
// "unrecognized arguments: --enable-ep-moe".
var removedFlags = map[string][]removal{
	engine.SGLang: {
		{"--enable-ep-moe", "--ep-size", "set --ep-size to the same value as --tp-size"},
		{"--enable-deepep-moe", "--moe-a2a-backend", "set --moe-a2a-backend deepep"},
		{"--enable-flashinfer-cutlass-moe", "--moe-runner-backend", "set --moe-runner-backend flashinfer_cutlass"},
		{"--enable-flashinfer-cutedsl-moe", "--moe-runner-backend", "set --moe-runner-backend flashinfer_cutedsl"},
		{"--enable-flashinfer-trtllm-moe", "--moe-runner-backend", "set --moe-runner-backend flashinfer_trtllm"},
		{"--enable-triton-kernel-moe", "--moe-runner-backend", "set --moe-runner-backend triton_kernel"},
		{"--enable-flashinfer-mxfp4-moe", "--moe-runner-backend", "set --moe-runner-backend flashinfer_mxfp4"},
	},
}

// replacementOf is what to write instead of a flag the help does not list:
// an option whose own help says it replaces the flag, else the replacement
// the engine's source names for a flag it removed (removedFlags). Either
// must be an option this build takes. why says where the replacement comes
// from, for the finding; "" when there is none.
func (t *Table) replacementOf(name string) (flag, why string) {
	for _, o := range t.Options {
		for _, r := range o.Replaces {
			if r == name {
				return o.Names[0], fmt.Sprintf("this build's %s says it replaces it", o.Names[0])
			}
		}
	}
	for _, r := range removedFlags[t.Engine] {
		if r.flag == name && t.Lookup(r.replacement) != nil {
			return r.replacement, fmt.Sprintf("%s removed it: %s instead", engineTitle(t.Engine), r.how)
		}
	}
	return "", ""
}

// engineTitle names an engine in a finding.
func engineTitle(name string) string {
	if p := engine.Lookup(name); p != nil && p.Title != "" {
		return p.Title
	}
	return name
}
