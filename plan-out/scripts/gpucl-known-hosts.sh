#!/bin/bash
# gpucl-known-hosts: `ssh gpu-pg0-2` from a peer (mpirun, pdsh, deepspeed launchers) checks the
# peer's CURRENT host key, with nothing in the user's known_hosts. On Azure a powered-up node is a
# new VM, and cloud-init makes it new host keys at its first boot: a known_hosts line a user kept
# goes stale, and a name never seen stops a BatchMode ssh ("Host key verification failed").
# So each node publishes its own keys where every node reads them:
#   publish [NAME]  (every node: the gpucl-hosts timer, and the prolog on each of a job's nodes
#                   before the job starts) writes "NAME,ADDRESS KEYTYPE KEY", one line per host
#                   key, to /sched/h100/host-keys/NAME when that differs. NAME: a GPU node's Slurm
#                   name (node-name.sh), the host name elsewhere; ADDRESS: the one this node
#                   reaches the scheduler from.
#   lookup HOST     (ssh, as the user: KnownHostsCommand in /etc/ssh/ssh_config.d, OpenSSH >= 8.5)
#                   prints what was published for HOST, a node name or an address; nothing for
#                   any other host, which ssh then checks against known_hosts as always.
# ssh accepts a host whose key matches any line it has for it, so a stale line in a user's own
# known_hosts does no harm; StrictHostKeyChecking is left as it is. The same as SSSD's
# sss_ssh_knownhosts (`KnownHostsCommand /usr/bin/sss_ssh_knownhosts %H`), with /sched as the
# directory. Only root writes there.
set -eu
export LC_ALL=C  # [a-z] below means a to z, and sort's order is the same on every node
dir=${GPUCL_HOST_KEYS:-/sched/h100/host-keys}
ssh_dir=${GPUCL_SSH_DIR:-/etc/ssh}
run=${GPUCL_RUN_DIR:-/run}
libexec=${GPUCL_LIBEXEC:-/usr/local/libexec/gpu-clusters}

valid() {  # a name or IPv4 address as ssh hands %H over (lower case): nothing that walks a path
  case "$1" in "" | [!a-z0-9]* | *[!a-z0-9.-]*) return 1 ;; esac
}

node_name() {  # a GPU node's Slurm name (node-name.sh, kept in $run), else the host name
  if [ -n "${1:-}" ]; then
    echo "$1"
  elif [ -s "$run/gpucl-node-name" ]; then
    cat "$run/gpucl-node-name"
  elif [ -x "$libexec/node-name.sh" ]; then
    # a VM keeps its name while it lives (names.json maps its instance id); no wait here: a node
    # not named yet publishes at its next run
    GPUCL_NAME_WAIT=0 "$libexec/node-name.sh" 2>/dev/null
  else
    hostname -s
  fi
}

node_address() {  # the address this node reaches the scheduler from, else its first one
  local peer addr=""
  peer=$(getent ahostsv4 h100-scheduler 2>/dev/null | awk '$1 !~ /^127\./ { print $1; exit }')
  if [ -n "$peer" ]; then
    addr=$(ip -4 -o route get "$peer" 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  fi
  case "$addr" in "" | 127.*) addr=$(hostname -I 2>/dev/null | awk '{ print $1 }') ;; esac
  echo "$addr"
}

publish() {
  local name addr lines pub tmp
  name=$(node_name "${1:-}" | tr '[:upper:]' '[:lower:]') || name=""
  if ! valid "$name"; then
    echo "gpucl-known-hosts: this node has no name to publish its host keys under yet" >&2
    return 0
  fi
  if [ ! -s "$run/gpucl-node-name" ] && [ -x "$libexec/node-name.sh" ]; then
    echo "$name" > "$run/gpucl-node-name"
  fi
  [ -d "${dir%/*}" ] || return 0  # /sched not mounted yet
  addr=$(node_address)
  lines=$(for pub in "$ssh_dir"/ssh_host_*_key.pub; do
    if [ -r "$pub" ]; then awk -v host="$name${addr:+,$addr}" 'NF >= 2 { print host, $1, $2 }' "$pub"; fi
  done | sort)
  if [ -z "$lines" ]; then
    echo "gpucl-known-hosts: no host keys in $ssh_dir" >&2
    return 1
  fi
  [ "$lines" != "$(cat "$dir/$name" 2>/dev/null)" ] || return 0
  install -d -m 0755 "$dir"
  tmp=$(mktemp "$dir/.$name.XXXXXX")
  printf '%s\n' "$lines" > "$tmp"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$dir/$name"
  echo "gpucl-known-hosts: published the host keys of $name${addr:+ ($addr)}"
}

lookup() {
  local host=${1:-}
  valid "$host" || return 0
  if [ -f "$dir/$host" ]; then
    cat "$dir/$host"
  elif [[ $host =~ ^[0-9.]+$ ]]; then  # an address: the lines of the node that published it
    awk -v host="$host" '{ n = split($1, names, ","); for (i = 1; i <= n; i++) if (names[i] == host) { print; next } }' \
      "$dir"/* 2>/dev/null || true
  fi
}

case "${1:-}" in
  publish) publish "${2:-}" ;;
  lookup) lookup "${2:-}" ;;
  *)
    echo "usage: gpucl-known-hosts.sh publish [NAME] | lookup HOST" >&2
    exit 2
    ;;
esac
