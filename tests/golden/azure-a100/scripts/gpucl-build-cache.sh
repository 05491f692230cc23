#!/bin/bash
# gpucl-build-cache NAME VERSION BUILD: install NAME from the cluster's build cache on /sched, or
# build it here and publish it there, so a cluster builds pyxis and LBNL NHC once, not once per
# node (every resize and replace boots nodes while the scheduler is up). BUILD is a shell command
# that installs under $DESTDIR (pyxis' and NHC's `make install` honour it). The cache key is
# VERSION plus what the build depends on here: CPU architecture, OS release, the Slurm release
# (pyxis must be built against the deployed one), so a node of another image builds its own.
# One builder per key: the others wait on its lock in the cache (flock; on NFS 4.1 the client
# takes it as a POSIX lock on the server, which frees it when a crashed holder's lease ends), so
# a new cluster's nodes, which all boot at once, build once too: the scheduler builds pyxis
# before slurmctld starts, the first GPU node NHC. The wait is bounded ($GPUCL_BUILD_LOCK_S):
# past it, a node builds for itself. /sched not mounted: build here, publish nothing. Anyone who
# is root on a node can write /sched, and already holds the munge key: the cache trusts nothing
# less than the cluster already does.
set -eu
name=$1 version=$2 build=$3
arch=$(dpkg --print-architecture)
os=$(awk -F= '$1 == "ID" || $1 == "VERSION_ID" {gsub(/"/, "", $2); printf "%s", $2}' /etc/os-release)
slurm=$(dpkg-query -W -f='${Version}' slurm-smd 2>/dev/null || echo none)
key=$(printf '%s' "$name-$version-$arch-$os-slurm$slurm" | tr -c 'A-Za-z0-9._-' _)
cache=/sched/a100/build
tarball=$cache/$key.tar.gz
# Existing directories keep their owner and mode (/, /usr, /etc are never taken from a tarball).
unpack() { tar -xzf "$1" -C / --no-overwrite-dir --no-same-owner; }
lock_s=${GPUCL_BUILD_LOCK_S:-600}
if mountpoint -q /sched && mkdir -p "$cache" && exec 9>>"$cache/.$key.lock"; then
  if ! flock -n 9; then
    echo "gpucl-build-cache: another node is building $name; waiting for it (at most $lock_s s)"
    flock -w "$lock_s" 9 || echo "gpucl-build-cache: $name: still locked after $lock_s s; building here"
  fi
fi
if mountpoint -q /sched && [ -s "$tarball" ]; then
  unpack "$tarball"
  echo "gpucl-build-cache: $name installed from $tarball"
  exit 0
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
DESTDIR=$stage bash -euc "$build"
packed=$(mktemp --suffix .tar.gz)
tar -czf "$packed" -C "$stage" --owner=0 --group=0 .
unpack "$packed"
if mountpoint -q /sched && mkdir -p "$cache" && tmp=$(mktemp "$cache/.$key.XXXXXX"); then
  cp "$packed" "$tmp" && chmod 0644 "$tmp" && mv -f "$tmp" "$tarball"
  echo "gpucl-build-cache: $name built here and published to $tarball"
else
  echo "gpucl-build-cache: $name built here (/sched not mounted: not published)"
fi
rm -f "$packed"
