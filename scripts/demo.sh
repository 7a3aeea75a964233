#!/usr/bin/env bash
# make demo: a whole campaign (the SGLang baseline, the baseline without
# allreduce fusion, EAGLE-3 topk 4, EAGLE-3 topk 1 on spec v2) against
# `bakeoff sim` on this machine,
# ending with the verdict. A symlink named nvidia-smi to bakeoff, first on
# PATH, answers from the simulated servers' "GPU memory".
# A first argument ending in .yaml is the campaign to run instead of
# configs/demo.yaml (make demo-disagg: configs/demo-disagg.yaml). Extra
# arguments go to `bakeoff run` (e.g. --out DIR, --dry-run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(pwd)/bin
simpath=$(mktemp -d)
trap 'rm -rf "$simpath"' EXIT
ln -s "$bin/bakeoff" "$simpath/nvidia-smi"
export PATH="$simpath:$PATH"
export BAKEOFF_SIM_STATE="$simpath/gpu-state"
mkdir -p "$BAKEOFF_SIM_STATE"
config=configs/demo.yaml
if [[ "${1:-}" == *.yaml ]]; then
	config=$1
	shift
fi
"$bin/bakeoff" run "$config" "$@"
