#!/bin/sh
# clientcpu.sh measures the load generator's CPU cost per streamed chunk
# against the reference asyncio + aiohttp client (scripts/aiohttp_client.py),
# the same way: the same local SSE server in a process of its own, the same
# load (C=32, 256 requests, 200 one-token chunks each), and the user+system
# CPU time of each client process over the load (getrusage), divided by the
# chunks it received. Runs alternate between the two clients, RUNS of each,
# and the script prints every figure, the medians and their ratio, for each
# server mode:
#   burst  every chunk flushed on its own, as fast as the socket takes them
#   steps  every stream's next chunk written at the same 2 ms tick, as an
#          engine's decode step does, so each chunk reaches the client alone
# Usage: scripts/clientcpu.sh [RUNS] [MODES]   (defaults: 7, "burst steps")
# Needs Go and Debian's python3-aiohttp (/usr/bin/python3).
set -eu
runs=${1:-7}
modes=${2:-burst steps}
py=${PYTHON:-/usr/bin/python3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/loadgen.test" ./loadgen)

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(go version | cut -d' ' -f3), $("$py" -c 'import sys, aiohttp; print("Python", sys.version.split()[0], "aiohttp", aiohttp.__version__)')"
for mode in $modes; do
	mkfifo "$tmp/stdin-$mode"
	BAKEOFF_LOOP_SERVER=$mode "$tmp/loadgen.test" <"$tmp/stdin-$mode" >"$tmp/url-$mode" &
	exec 3>"$tmp/stdin-$mode" # the server runs until this closes
	while [ ! -s "$tmp/url-$mode" ]; do sleep 0.1; done
	url=$(cat "$tmp/url-$mode")
	: >"$tmp/go-$mode"
	: >"$tmp/py-$mode"
	i=0
	while [ $i -lt "$runs" ]; do
		BAKEOFF_CPU_SERVER=$url "$tmp/loadgen.test" -test.run '^$' -test.bench '^BenchmarkClientCPU$' -test.benchtime 1x |
			awk '/cpu-µs\/chunk/ {for (f = 1; f < NF; f++) if ($(f+1) == "cpu-µs/chunk") print $f}' >>"$tmp/go-$mode"
		"$py" "$root/scripts/aiohttp_client.py" "$url" 32 256 | awk '{print $2}' >>"$tmp/py-$mode"
		i=$((i + 1))
	done
	exec 3>&-
	wait
	g=$(median <"$tmp/go-$mode")
	p=$(median <"$tmp/py-$mode")
	echo "$mode: bakeoff µs/chunk: $(tr '\n' ' ' <"$tmp/go-$mode")"
	echo "$mode: aiohttp µs/chunk: $(tr '\n' ' ' <"$tmp/py-$mode")"
	echo "$mode: median bakeoff $g µs, aiohttp $p µs, ratio $(awk -v g="$g" -v p="$p" 'BEGIN {printf "%.1f", p / g}')×"
done
