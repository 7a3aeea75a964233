#!/usr/bin/env bash
# What the tests need beyond Go, installed when this machine can (root with
# apt-get, as on a fresh Debian machine and in CI), else named in one line:
# the tests that need a missing piece skip with a message of their own, and
# the rest run.
#   OpenSSH's sshd and ssh   real SSH hosts on 127.0.0.1 (remote/, faults/)
#   iproute2, util-linux     hosts in network namespaces (faults/, make faults)
#   chromium                 the report's browser tests (report/)
#   slurmctld, slurmd, slurm-client, munge
#                            a real Slurm cluster (slurm/, make slurm)
# make test, make faults and make slurm run it first; .ci/run runs make.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
have sshd || need+=(openssh-server)
have ssh || need+=(openssh-client)
have ip || need+=(iproute2)
have chromium || need+=(chromium)
have slurmctld || need+=(slurmctld)
have slurmd || need+=(slurmd)
have salloc || need+=(slurm-client)
have munged || need+=(munge)
have unshare || need+=(util-linux)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  exit 0
fi
echo "test-deps: missing ${need[*]}; the tests that need them skip. On Debian: sudo apt-get install --no-install-recommends ${need[*]}" >&2
