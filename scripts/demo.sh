#!/usr/bin/env bash
# make demo: a whole campaign (three SGLang variants) against `bakeoff sim`
# on this machine. The fake nvidia-smi reports the sim's "GPU memory".
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(pwd)/bin
if ! "$bin/bakeoff" help run >/dev/null 2>&1; then
  echo "make demo: 'bakeoff run' is not built into this binary yet; the orchestrator is still missing." >&2
  exit 1
fi
simpath=$(mktemp -d)
trap 'rm -rf "$simpath"' EXIT
ln -s "$bin/bakeoff" "$simpath/nvidia-smi"
export PATH="$simpath:$PATH"
export BAKEOFF_SIM_STATE="$simpath/gpu-state"
exec "$bin/bakeoff" run configs/demo.yaml "$@"
