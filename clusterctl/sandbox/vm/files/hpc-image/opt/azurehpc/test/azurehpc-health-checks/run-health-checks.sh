#!/bin/bash
# gpucl sandbox stand-in for the Azure HPC image's azurehpc-health-checks runner
# (/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh; usage as in the v0.4.x
# project: -c CONF [-o LOGFILE] [-t SECONDS] [-v]). The real one runs LBNL NHC with Azure's custom checks in its
# container and exits 1 when a check fails; this reads the same NHC config lines and runs each
# check as a stand-in: the arguments are validated as Azure's checks read them, and a check
# passes unless /run/gpucl-sandbox/fail-checks names it (the sandbox's fail-deep fault).
set -u
conf="" log=./health.log timeout=500
while [ $# -gt 0 ]; do
  case "$1" in
    -c | --config) conf=$2; shift 2 ;;
    -o | --output) log=$2; shift 2 ;;
    -t | --timeout) timeout=$2; shift 2 ;;
    -v | -verbose | --verbose | -a | --all_tests) shift ;;
    *) echo "run-health-checks.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -r "$conf" ] || { echo "run-health-checks.sh: no config $conf" >&2; exit 2; }
if [ "$EUID" -ne 0 ]; then
  echo "This script needs superuser privileges. Please run it with sudo."
  exit 1
fi
[[ $timeout =~ ^[0-9]+$ ]] || { echo "run-health-checks.sh: -t $timeout is not seconds" >&2; exit 2; }
number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
fail() { echo "ERROR:  nhc:  Health check failed:  $*" | tee -a "$log"; exit 1; }

check_nccl_allreduce() {  # floor GB/s, repeats, message size, topology file (v0.4.5 order)
  number "$1" && [[ $2 =~ ^[0-9]+$ ]] && [[ $3 =~ ^[0-9]+[KMG]?$ ]] ||
    fail "check_nccl_allreduce: bad arguments: $*"
}
check_ib_bw_gdr() { number "$1" || fail "check_ib_bw_gdr: bad floor: $*"; }

: >"$log"
while IFS= read -r line; do
  line=${line%%#*}
  [[ $line =~ ^[[:space:]]*\*[[:space:]]*\|\|[[:space:]]*(check_[a-z_0-9]+)(.*)$ ]] || continue
  check=${BASH_REMATCH[1]}
  read -r -a args <<<"${BASH_REMATCH[2]}"
  if ! declare -F "$check" >/dev/null; then
    fail "$check: not a check this runner knows"
  fi
  "$check" "${args[@]}"
  if [ -r /run/gpucl-sandbox/fail-checks ] && grep -qx "$check" /run/gpucl-sandbox/fail-checks; then
    fail "$check ${args[*]}: sandbox fault injected"
  fi
  echo "$check ${args[*]}: passed" | tee -a "$log"
done <"$conf"
echo "Health checks completed with exit code: 0." | tee -a "$log"
exit 0
