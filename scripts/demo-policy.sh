#!/usr/bin/env bash
# make demo-policy: a race of the baseline against EAGLE-3 chains of 1 to 4
# steps on `bakeoff sim` (configs/demo-policy.yaml), whose serving policy the
# run writes as one SGLang server with adaptive speculative decoding; then a
# second race of that server against the configurations it switches
# between, which says level by level whether it delivers their best
# (docs/CONFIG.md, "Checking a serving policy"). Extra arguments go to both
# runs of `bakeoff run`.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(pwd)/results
./scripts/demo.sh configs/demo-policy.yaml --results "$results" "$@"
run=$(ls -td "$results"/demo-policy/*/ | head -1)
policy="$run/serving-policy/policy.yaml"
if [[ ! -f "$policy" ]]; then
	echo "The race's policy is not one engine setting (its last lines above say why): nothing to check."
	exit 0
fi
# The check is the demo's campaign with the policy and the configurations it
# switches between as its scenarios, as the policy's own header lists them.
list=$(sed -n 's/^#   scenarios: //p' "$policy")
first=$(sed 's/^\[\([^,]*\),.*/\1/' <<<"$list")
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
mkdir "$check/configs"
ln -s "$(pwd)/scenarios" "$check/scenarios"
sed -e 's/^campaign: demo-policy$/campaign: demo-policy-check/' \
	-e "s|^scenarios: .*|scenarios: $list|" \
	-e "s|^baseline: .*|baseline: $first|" \
	configs/demo-policy.yaml >"$check/configs/demo-policy-check.yaml"
echo
echo "Checking the written policy: $list"
./scripts/demo.sh "$check/configs/demo-policy-check.yaml" --results "$results" "$@"
