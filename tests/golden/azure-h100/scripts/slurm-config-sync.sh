#!/bin/bash
# Brings the scheduler's Slurm files to what the stack now says (cluster h100, stack
# azure-h100) and, when one changed, runs `scontrol reconfigure`: GPU nodes run configless, so
# slurmd fetches the new files from slurmctld; no node restarts and running jobs keep running.
# Run by Pulumi as an Azure Run Command on the scheduler (no SSH needed); its text changes, and so
# it runs again, whenever a resize or a new partition changes these files.
set -euo pipefail
# On a new scheduler, let cloud-init finish first (it writes the same files and starts slurmctld).
cloud-init status --wait >/dev/null 2>&1 || true
# Nodes Slurm knows that the stack no longer has (a smaller `nodes`, a removed partition) are
# drained, and nothing goes on until none of them runs a job: their VMs are deleted next.
keep='gpu-pg0-[1-2]'
reason='gpucl: resize: removed from the stack'
wait_limit=2700
if systemctl is-active --quiet slurmctld; then
  known=$(sinfo -h -N -o %N | sort -u)
  wanted=$(scontrol show hostnames "$keep" | sort -u)
  leaving=$(comm -23 <(printf '%s\n' "$known") <(printf '%s\n' "$wanted") | grep . | paste -sd, -) || true
  if [ -n "$leaving" ]; then
    echo "slurm-config-sync: draining nodes that leave the stack: $leaving"
    scontrol update NodeName="$leaving" State=DRAIN Reason="$reason"
    waited=0
    while :; do
      if jobs=$(squeue -h -w "$leaving" -o %i); then
        jobs=$(printf '%s' "$jobs" | paste -sd, -)
        [ -z "$jobs" ] && break
        echo "slurm-config-sync: waiting for job(s) $jobs on leaving nodes (${waited}s of ${wait_limit}s)"
      else
        echo "slurm-config-sync: squeue failed, asking again (${waited}s of ${wait_limit}s)"
      fi
      if [ "$waited" -ge "$wait_limit" ]; then
        echo "slurm-config-sync: job(s) ${jobs:-unknown} still run on $leaving after ${wait_limit}s;" \
          "nothing was changed or deleted: let them finish (or scancel them) and run up again" >&2
        exit 1
      fi
      sleep 60
      waited=$((waited + 60))
    done
    echo "slurm-config-sync: leaving nodes drained and idle: $leaving"
  fi
fi
changed=""
put() {
  local path=$1 tmp
  tmp=$(mktemp)
  base64 -d > "$tmp"
  if ! cmp -s "$tmp" "$path"; then
    install -D -m 0644 -o root -g root "$tmp" "$path"
    changed="$changed $path"
  fi
  rm -f "$tmp"
}
# nfsd's threads follow the node count (written by cloud-init at boot, by this on a resize);
# first, so that an NFS-only change (login nodes) does not reconfigure Slurm.
put /etc/nfs.conf.d/50-gpu-clusters.conf <<'B64'
W25mc2RdCnRocmVhZHM9OAo=
B64
if [ -n "$changed" ]; then
  echo "slurm-config-sync: updated$changed"
  changed=""
  if systemctl is-active --quiet nfs-server && [ -e /proc/fs/nfsd/threads ]; then
    # rpc.nfsd(8) NPROC on a running server sets its thread count (the kernel's nfsd/threads,
    # Documentation/filesystems/nfs/nfsd-admin-interfaces.rst): no restart, so no NFSv4 grace
    # period for the clients.
    rpc.nfsd 8
    echo "slurm-config-sync: nfsd now runs $(cat /proc/fs/nfsd/threads) threads"
  else
    echo "slurm-config-sync: nfsd is not running here; it starts with 8 threads"
  fi
fi
put /etc/slurm/slurm.conf <<'B64'
IyBzbHVybS5jb25mIGZvciBjbHVzdGVyIGgxMDAgKHN0YWNrIGF6dXJlLWgxMDApLiBSZW5kZXJl
ZCBieSBncHUtY2x1c3RlcnMgZnJvbQojIHRlbXBsYXRlcy9zbHVybS9zbHVybS5jb25mLmoyOiBl
ZGl0IHRoZSBzdGFjayBvciB0aGUgdGVtcGxhdGUsIG5vdCB0aGlzIGZpbGUuCkNsdXN0ZXJOYW1l
PWgxMDAKU2x1cm1jdGxkSG9zdD1oMTAwLXNjaGVkdWxlcgpTbHVybVVzZXI9c2x1cm0KQXV0aFR5
cGU9YXV0aC9tdW5nZQpDcmVkVHlwZT1jcmVkL211bmdlClNsdXJtY3RsZFBvcnQ9NjgxNwpTbHVy
bWRQb3J0PTY4MTgKU3RhdGVTYXZlTG9jYXRpb249L3NoYXJlZC9zcG9vbC9zbHVybWN0bGQKU2x1
cm1kU3Bvb2xEaXI9L3Zhci9zcG9vbC9zbHVybWQKIyBObyBtYWlsIG9uIHRoZSBjbHVzdGVyOiBT
bHVybSAyNC4xMSsgbG9ncyBhbiBlcnJvciBhdCBldmVyeSBzdGFydCB3aGVuIE1haWxQcm9nIGRv
ZXMgbm90IGV4aXN0LgpNYWlsUHJvZz0vYmluL3RydWUKU2x1cm1jdGxkUGlkRmlsZT0vcnVuL3Ns
dXJtL3NsdXJtY3RsZC5waWQKU2x1cm1kUGlkRmlsZT0vcnVuL3NsdXJtL3NsdXJtZC0lbi5waWQK
U2x1cm1jdGxkTG9nRmlsZT0vdmFyL2xvZy9zbHVybS9zbHVybWN0bGQubG9nClNsdXJtZExvZ0Zp
bGU9L3Zhci9sb2cvc2x1cm0vc2x1cm1kLSVuLmxvZwoKIyBTY2hlZHVsaW5nOiB3aG9sZSBjb3Jl
cyBhbmQgbWVtb3J5IGFzIGNvbnN1bWFibGUgcmVzb3VyY2VzLCBHUFVzIGFzIEdSRVMuClNjaGVk
dWxlclR5cGU9c2NoZWQvYmFja2ZpbGwKU2VsZWN0VHlwZT1zZWxlY3QvY29uc190cmVzClNlbGVj
dFR5cGVQYXJhbWV0ZXJzPUNSX0NvcmVfTWVtb3J5CkdyZXNUeXBlcz1ncHUKTXBpRGVmYXVsdD1u
b25lCiMgSm9icyBrZWVwIHNsdXJtZCdzIHVubGltaXRlZCBsb2NrZWQgbWVtb3J5IChpdHMgdW5p
dCBzZXRzIExpbWl0TUVNTE9DSz1pbmZpbml0eSkgaW5zdGVhZCBvZiB0aGUKIyBzdWJtaXR0aW5n
IHNoZWxsJ3MgKG9mdGVuIDggTWlCKTogUkRNQSBhbmQgTkNDTCBvdmVyIEluZmluaUJhbmQgcmVn
aXN0ZXIgbGFyZ2UgYnVmZmVycy4KUHJvcGFnYXRlUmVzb3VyY2VMaW1pdHNFeGNlcHQ9TUVNTE9D
SwpQcm9jdHJhY2tUeXBlPXByb2N0cmFjay9jZ3JvdXAKVGFza1BsdWdpbj10YXNrL2FmZmluaXR5
LHRhc2svY2dyb3VwCkpvYkFjY3RHYXRoZXJUeXBlPWpvYmFjY3RfZ2F0aGVyL25vbmUKQWNjb3Vu
dGluZ1N0b3JhZ2VUeXBlPWFjY291bnRpbmdfc3RvcmFnZS9ub25lCiMgQ29udGFpbjogZXZlcnkg
am9iIGdldHMgYW4gImV4dGVybiIgc3RlcCBvbiBlYWNoIG9mIGl0cyBub2RlcywgaW50byB3aGlj
aCBwYW1fc2x1cm1fYWRvcHQgcHV0cwojIHRoZSBqb2Igb3duZXIncyBzc2ggc2Vzc2lvbnMgdGhl
cmUgKFNjaGVkTUQgcGFtX3NsdXJtX2Fkb3B0IGd1aWRlOyBpdCBpbXBsaWVzIEFsbG9jKS4KUHJv
bG9nRmxhZ3M9QWxsb2MsQ29udGFpbgpQcm9sb2c9L3Vzci9sb2NhbC9saWJleGVjL2dwdS1jbHVz
dGVycy9wcm9sb2cuc2gKRXBpbG9nPS91c3IvbG9jYWwvbGliZXhlYy9ncHUtY2x1c3RlcnMvZXBp
bG9nLnNoCiMgVGhlIFNLVSdzIENVREEvVUNYL01QSSBkZWZhdWx0cyBpbnRvIGVhY2ggdGFzayAo
d2hhdCAvZXRjL25jY2wuY29uZiBjYW5ub3QgZGVsaXZlcikuClRhc2tQcm9sb2c9L3Vzci9sb2Nh
bC9saWJleGVjL2dwdS1jbHVzdGVycy9ncHVjbC10YXNrLWVudi5zaApUb3BvbG9neVBsdWdpbj10
b3BvbG9neS90cmVlCiMgMjogYSBET1dOIG5vZGUgcmV0dXJucyB3aGVuIGl0IHJlZ2lzdGVycyB3
aXRoIGEgdmFsaWQgY29uZmlndXJhdGlvbiwgc28gYSBub2RlIHRoYXQgcmVib290ZWQgb3IKIyBj
YW1lIHVwIGxhdGUgKGFmdGVyIFJlc3VtZVRpbWVvdXQpIHJlam9pbnMgYnkgaXRzZWxmLCBhcyBp
biBBenVyZS9jeWNsZWNsb3VkLXNsdXJtJ3MgdGVtcGxhdGUuCiMgc2x1cm1kIHJ1bnMgdGhlIGhl
YWx0aCBjaGVjayBiZWZvcmUgaXQgcmVnaXN0ZXJzOiBhbiB1bmhlYWx0aHkgbm9kZSBpcyBkcmFp
bmVkIGFuZCBzdGF5cyBvdXQuCiMgRHJhaW5zIChhbiBhZG1pbidzLCBhIGhlYWx0aCBjaGVjaydz
LCB2YWxpZGF0ZSdzKSBhcmUgbmV2ZXIgbGlmdGVkIGJ5IGl0LgpSZXR1cm5Ub1NlcnZpY2U9MgpT
bHVybWN0bGRUaW1lb3V0PTMwMApTbHVybWRUaW1lb3V0PTMwMApJbmFjdGl2ZUxpbWl0PTAKTWlu
Sm9iQWdlPTMwMApLaWxsV2FpdD0zMApXYWl0dGltZT0wCgojIE5vZGUgaGVhbHRoOiBmYWlsaW5n
IGNoZWNrcyBkcmFpbiB0aGUgbm9kZSB3aXRoIGEgcmVhc29uIHN0YXJ0aW5nICJncHVjbDoiOwoj
IHRoZSBzYW1lIHByb2dyYW0gcmVzdW1lcyBvbmx5IGRyYWlucyBjYXJyeWluZyB0aGF0IHByZWZp
eCAobmV2ZXIgYW4gYWRtaW4ncyBvd24gZHJhaW4pLgpIZWFsdGhDaGVja1Byb2dyYW09L3Vzci9s
b2NhbC9saWJleGVjL2dwdS1jbHVzdGVycy9ncHVjbC1oZWFsdGguc2gKSGVhbHRoQ2hlY2tJbnRl
cnZhbD0zMDAKSGVhbHRoQ2hlY2tOb2RlU3RhdGU9QU5ZLENZQ0xFCgojIENvbmZpZ2xlc3M6IHNs
dXJtZCBvbiB0aGUgR1BVIG5vZGVzIGZldGNoZXMgc2x1cm0uY29uZiwgZ3Jlcy5jb25mLCBjZ3Jv
dXAuY29uZiwgdG9wb2xvZ3kuY29uZiBhbmQKIyBwbHVnc3RhY2suY29uZiBmcm9tIHNsdXJtY3Rs
ZCAoYHNsdXJtZCAtLWNvbmYtc2VydmVyYCk7IGEgcmVzaXplIHJld3JpdGVzIHRoZW0gaGVyZSBv
bmx5IGFuZCBydW5zCiMgYHNjb250cm9sIHJlY29uZmlndXJlYCwgc28gbm8gbm9kZSByZXN0YXJ0
cy4KIyBwb3dlcl9zYXZlX21pbl9pbnRlcnZhbDogc2x1cm1jdGxkIHN0YXJ0cyBhIHBvd2VyIHBy
b2dyYW0gYXQgbW9zdCBldmVyeSAzMCBzIChkZWZhdWx0IDA6IGFzCiMgb2Z0ZW4gYXMgbm9kZSBz
dGF0ZXMgY2hhbmdlLCAxLTEwIHMpLiBFYWNoIHByb2dyYW0gc2VuZHMgb25lIHN0YXJ0IG9yIGRl
YWxsb2NhdGUgcGVyIHNjYWxlIHNldCwKIyBhbmQgQXp1cmUgcmVmaWxscyBhIHJlc291cmNlJ3Mg
YWN0aW9uIGJ1Y2tldCBhdCBhIGZldyBhIG1pbnV0ZSAoTWljcm9zb2Z0IExlYXJuLCAiQ29tcHV0
ZQojIHRocm90dGxpbmcgbGltaXRzIik6IHN1c3BlbmRpbmcgMTAgbm9kZXMgZXZlcnkgMTAgcyBh
Y3Jvc3MgMTAgc2V0cyBnb3QgODQxIG9mIDEsODQxIGNhbGxzCiMgdGhyb3R0bGVkLCBldmVyeSAz
MCBzIG5vbmUgKGJlbmNobWFya3MvcG93ZXJfc2NhbGUucHkpLiBBIFNsdXJtY3RsZFBhcmFtZXRl
cnMgb3B0aW9uIChTY2hlZE1ECiMgc3JjL3NsdXJtY3RsZC9wb3dlcl9zYXZlLmM7IGVsYXN0aWNf
Y29tcHV0aW5nLmh0bWwpLCAyNC4xMSB0byAyNi4wNSBhbGlrZS4KU2x1cm1jdGxkUGFyYW1ldGVy
cz1lbmFibGVfY29uZmlnbGVzcyxwb3dlcl9zYXZlX21pbl9pbnRlcnZhbD0zMAoKIyBQb3dlciBz
YXZpbmc6IGFuIGlkbGUgbm9kZSBpcyBkZWFsbG9jYXRlZCBieSBTdXNwZW5kUHJvZ3JhbSBhZnRl
ciBpdHMgcGFydGl0aW9uJ3MKIyBTdXNwZW5kVGltZSAoY29tcHV0ZSBiaWxsaW5nIHN0b3BzLCB0
aGUgVk0gYW5kIHNvIGl0cyBuYW1lIHN1cnZpdmUpIGFuZCBzdGFydGVkIGJ5CiMgUmVzdW1lUHJv
Z3JhbSB3aGVuIGEgam9iIG5lZWRzIGl0LiBBIG5vZGUgbm90IHJlZ2lzdGVyZWQgd2l0aGluIFJl
c3VtZVRpbWVvdXQgaXMgc2V0IERPV04gYnkKIyBzbHVybWN0bGQsIGl0cyBqb2IgcmVxdWV1ZWQs
IGFuZCBSZXN1bWVGYWlsUHJvZ3JhbSBnaXZlcyBpdCBhICJncHVjbDogcG93ZXI6IiByZWFzb24g
YW5kCiMgZGVhbGxvY2F0ZXMgaXQ7IGBncHVjbC1wb3dlciByZXR1cm5gIChhIHRpbWVyKSBtYWtl
cyBzdWNoIHBvd2VyZWQtZG93biBub2RlcyBpZGxlIGFnYWluLgojIE5vIGlkbGVfb25fbm9kZV9z
dXNwZW5kOiBpdCBjbGVhcnMgRFJBSU4gYW5kIEZBSUwgYXQgZXZlcnkgc3VzcGVuZCwgc28gYW4g
YWRtaW4ncyBvciBhIGhlYWx0aAojIGNoZWNrJ3MgZHJhaW4gd291bGQgYmUgZ29uZSBvbmNlIHRo
ZSBub2RlIHBvd2VycyBkb3duLiBBIGRyYWluZWQgbm9kZSBpcyBwb3dlcmVkIGRvd24gd2l0aCBp
dHMKIyBkcmFpbiwgcmVhc29uIGFuZCBvd25lciBrZXB0LgojIFRyZWVXaWR0aCBpcyBTbHVybSdz
IGRlZmF1bHQ6IHRoZSBvbGQgYWR2aWNlIG9mIDY1NTMzIGZvciBjbG91ZCBub2RlcyBpcyBnb25l
IGZyb20gU2NoZWRNRCdzCiMgZWxhc3RpYyBjb21wdXRpbmcgZ3VpZGUgc2luY2UgMjMuMTEsIGFu
ZCBhIGZsYXQgZmFuLW91dCBvZiAxLDAwMCBub2RlcyBoYXMgc2x1cm1jdGxkIG9wZW4gZXZlcnkK
IyBjb25uZWN0aW9uIGl0c2VsZi4KSm9iUmVxdWV1ZT0xClN1c3BlbmRUaW1lPTkwMApTdXNwZW5k
VGltZW91dD02MDAKUmVzdW1lVGltZW91dD0xODAwClJlc3VtZVByb2dyYW09L3Vzci9sb2NhbC9s
aWJleGVjL2dwdS1jbHVzdGVycy9yZXN1bWUuc2gKU3VzcGVuZFByb2dyYW09L3Vzci9sb2NhbC9s
aWJleGVjL2dwdS1jbHVzdGVycy9zdXNwZW5kLnNoClJlc3VtZUZhaWxQcm9ncmFtPS91c3IvbG9j
YWwvbGliZXhlYy9ncHUtY2x1c3RlcnMvcmVzdW1lLWZhaWwuc2gKUmVzdW1lUmF0ZT0wClN1c3Bl
bmRSYXRlPTAKCiMgTm9kZXM6IG9uZSBsaW5lIHBlciBzY2FsZSBzZXQgKG9uZSBJbmZpbmlCYW5k
IGZhYnJpYyBlYWNoKS4KTm9kZU5hbWU9Z3B1LXBnMC1bMS0yXSBDUFVzPTk2IEJvYXJkcz0xIFNv
Y2tldHNQZXJCb2FyZD0yIENvcmVzUGVyU29ja2V0PTQ4IFRocmVhZHNQZXJDb3JlPTEgUmVhbE1l
bW9yeT0xODE5MzE3IEdyZXM9Z3B1OmgxMDA6OCBGZWF0dXJlPWdwdSxncHUtcGcwLGgxMDAgU3Rh
dGU9Q0xPVUQKCiMgUGFydGl0aW9uczogam9icyBnZXQgd2hvbGUgbm9kZXMgKGFsbCB0aGVpciBH
UFVzIGFuZCB0aGUgZmFicmljIE5JQ3MpLiBNYXhOb2RlczogYSBqb2IgZml0cyBpbgojIG9uZSBz
Y2FsZSBzZXQsIG9uZSBJbmZpbmlCYW5kIGZhYnJpYzsgbm8gc3dpdGNoIGpvaW5zIHR3byAodG9w
b2xvZ3kuY29uZiksIHNvIGEgbGFyZ2VyIGpvYiB3b3VsZAojIHBlbmQgZm9yIGV2ZXIuIEVuZm9y
Y2VQYXJ0TGltaXRzIHJlZnVzZXMgaXQgYXQgc3VibWlzc2lvbiBpbnN0ZWFkICgiTm9kZSBjb3Vu
dCBzcGVjaWZpY2F0aW9uCiMgaW52YWxpZCI7IGBzY29udHJvbCBzaG93IHBhcnRpdGlvbmAgc2hv
d3MgTWF4Tm9kZXMsIGBjbHVzdGVyY3RsIHBsYW5gIHRoZSBsYXJnZXN0IGpvYikuCkVuZm9yY2VQ
YXJ0TGltaXRzPUFOWQpQYXJ0aXRpb25OYW1lPWdwdSBOb2Rlcz1ncHUtcGcwLVsxLTJdIERlZmF1
bHQ9WUVTIE1heE5vZGVzPTIgTWF4VGltZT1JTkZJTklURSBTdGF0ZT1VUCBPdmVyU3Vic2NyaWJl
PUVYQ0xVU0lWRSBTdXNwZW5kVGltZT05MDAK
B64
put /etc/slurm/gres.conf <<'B64'
IyBncmVzLmNvbmYgZm9yIGNsdXN0ZXIgaDEwMDogZXZlcnkgR1BVIG5vZGUgaGFzIDggR1BVcyBh
dCAvZGV2L252aWRpYVswLTddLgpBdXRvRGV0ZWN0PW9mZgpOb2RlTmFtZT1ncHUtcGcwLVsxLTJd
IE5hbWU9Z3B1IFR5cGU9aDEwMCBGaWxlPS9kZXYvbnZpZGlhWzAtN10K
B64
put /etc/slurm/topology.conf <<'B64'
IyB0b3BvbG9neS5jb25mIGZvciBjbHVzdGVyIGgxMDA6IGVhY2ggc2NhbGUgc2V0IGlzIG9uZSBJ
bmZpbmlCYW5kIGZhYnJpYyAoYSBsZWFmIHN3aXRjaCkuCiMgTm8gc3dpdGNoIGpvaW5zIHRoZSBs
ZWF2ZXM6IFNsdXJtIG5ldmVyIGdpdmVzIGEgam9iIG5vZGVzIG9mIHR3byBsZWF2ZXMgd2l0aG91
dCBhIGNvbW1vbiBwYXJlbnQKIyAoc2x1cm0gdG9wb2xvZ3kuaHRtbCksIHNvIGEgbXVsdGktbm9k
ZSBqb2IgYWx3YXlzIGhhcyBSRE1BIGJldHdlZW4gYWxsIG9mIGl0cyBub2Rlcy4gQSBqb2IgbGFy
Z2VyCiMgdGhhbiBvbmUgc2NhbGUgc2V0IHN0YXlzIHBlbmRpbmcgKCJSZXF1ZXN0ZWQgbm9kZSBj
b25maWd1cmF0aW9uIGlzIG5vdCBhdmFpbGFibGUiKS4KU3dpdGNoTmFtZT1ncHUtcGcwIE5vZGVz
PWdwdS1wZzAtWzEtMl0K
B64
if [ -z "$changed" ]; then
  echo "slurm-config-sync: unchanged"
  exit 0
fi
echo "slurm-config-sync: updated$changed"
if systemctl is-active --quiet slurmctld; then
  # A node still powering down (`%`) when slurmctld reconfigures with a changed node set stays
  # POWERING_DOWN for good on Slurm 24.11 (seen in the VM sandbox): wait until none is, at most
  # SuspendTimeout and a minute.
  suspend_timeout=$(scontrol show config | awk '$1 == "SuspendTimeout" {print $3 + 0; exit}')
  limit=$(( ${suspend_timeout:-600} + 60 ))
  wait_powered_down() {
    local waited=0 powering
    while powering=$(sinfo -h -N -o '%N %t' | awk '$2 ~ /%$/ {print $1}' | sort -u | paste -sd, -) &&
      [ -n "$powering" ] && [ "$waited" -lt "$limit" ]; do
      [ $((waited % 30)) = 0 ] && echo "slurm-config-sync: waiting for $powering to finish powering down (${waited}s of ${limit}s)"
      sleep 2
      waited=$((waited + 2))
    done
  }
  wait_powered_down
  # slurmctld can time out on a reconfigure while it is busy (seen right after a forced
  # power-down: "Socket timed out on send/recv"): a few tries, 10 s apart, then fail the command
  for try in 1 2 3 4 5; do
    if scontrol reconfigure; then
      echo "slurm-config-sync: scontrol reconfigure done"
      break
    fi
    if [ "$try" = 5 ]; then
      echo "slurm-config-sync: scontrol reconfigure failed 5 times" >&2
      exit 1
    fi
    sleep 10
  done
  # One that began powering down in the moment before the reconfigure: once it outlasts
  # SuspendTimeout, finish its power-down (RESUME on a powering-down node marks it powered down)
  # and give a drained one its drain and reason back (RESUME also lifts the drain).
  wait_powered_down
  sinfo -h -N -o '%N|%t|%E' | sort -u | while IFS='|' read -r node state why; do
    case "$state" in *%) ;; *) continue ;; esac
    echo "slurm-config-sync: $node still powering down after SuspendTimeout; marking it powered down"
    scontrol update NodeName="$node" State=RESUME
    case "$state" in drain* | drng*)
      scontrol update NodeName="$node" State=DRAIN Reason="$why"
      echo "slurm-config-sync: $node drained again: $why" ;;
    esac
  done
  # New or removed names: the name map follows (names waiting VMs, frees those of deleted ones)
  systemctl start --no-block gpucl-names.service || true
else
  systemctl restart slurmctld
fi
