#!/bin/bash
# gpucl-fetch URL SHA256 DEST: download URL and put it at DEST only if its sha256 is SHA256 (the
# pin in config/versions.yaml). Anything else is deleted and the step fails, so cloud-init reports
# it and nothing unverified is installed as root.
set -euo pipefail
url=$1 want=${2,,} dest=$3
tmp=$(mktemp "$dest.XXXXXX")
trap 'rm -f "$tmp"' EXIT
curl -fsSL --retry 3 -o "$tmp" "$url"
got=$(sha256sum "$tmp" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "gpu-clusters: REFUSED $url: its sha256 is $got, not the pinned $want (config/versions.yaml); nothing installed" >&2
  exit 1
fi
mv -f "$tmp" "$dest"
trap - EXIT
