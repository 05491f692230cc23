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
cGU9YXV0aC9tdW5nZQpDcmVkVHlwZT1jcmVkL211bmdlCiMgTm8gTWV0cmljc1R5cGU6IFNsdXJt
IDI1LjExKyBzZXJ2ZXMgT3Blbk1ldHJpY3Mgb3ZlciBIVFRQIG9uIFNsdXJtY3RsZFBvcnQsIHdo
aWNoIGV2ZXJ5IEdQVSBhbmQKIyBsb2dpbiBub2RlIG11c3QgcmVhY2gsIG9ubHkgd2hlbiBNZXRy
aWNzVHlwZSBpcyBzZXQgKFNjaGVkTUQgbWV0cmljcy5odG1sLCAiUGx1Z2luIExvYWRpbmciOwoj
IHNyYy9pbnRlcmZhY2VzL21ldHJpY3MuYzogd2l0aG91dCBpdCB0aGUgcGx1Z2luIGlzIGEgbm8t
b3AgYW5kIC9tZXRyaWNzLyogYW5zd2VyIGVtcHR5KS4gVGhlCiMgY2x1c3RlcidzIFByb21ldGhl
dXMgcmVhZHMgU2x1cm0gdGhyb3VnaCBpdHMgb3duIGV4cG9ydGVyIChjbHVzdGVyY3RsL21vbml0
b3Ivc2x1cm1fbWV0cmljcy5weSkuClNsdXJtY3RsZFBvcnQ9NjgxNwpTbHVybWRQb3J0PTY4MTgK
U3RhdGVTYXZlTG9jYXRpb249L3NoYXJlZC9zcG9vbC9zbHVybWN0bGQKU2x1cm1kU3Bvb2xEaXI9
L3Zhci9zcG9vbC9zbHVybWQKIyBObyBtYWlsIG9uIHRoZSBjbHVzdGVyOiBTbHVybSAyNC4xMSsg
bG9ncyBhbiBlcnJvciBhdCBldmVyeSBzdGFydCB3aGVuIE1haWxQcm9nIGRvZXMgbm90IGV4aXN0
LgpNYWlsUHJvZz0vYmluL3RydWUKU2x1cm1jdGxkUGlkRmlsZT0vcnVuL3NsdXJtL3NsdXJtY3Rs
ZC5waWQKU2x1cm1kUGlkRmlsZT0vcnVuL3NsdXJtL3NsdXJtZC0lbi5waWQKU2x1cm1jdGxkTG9n
RmlsZT0vdmFyL2xvZy9zbHVybS9zbHVybWN0bGQubG9nClNsdXJtZExvZ0ZpbGU9L3Zhci9sb2cv
c2x1cm0vc2x1cm1kLSVuLmxvZwoKIyBTY2hlZHVsaW5nOiB3aG9sZSBjb3JlcyBhbmQgbWVtb3J5
IGFzIGNvbnN1bWFibGUgcmVzb3VyY2VzLCBHUFVzIGFzIEdSRVMuClNjaGVkdWxlclR5cGU9c2No
ZWQvYmFja2ZpbGwKU2VsZWN0VHlwZT1zZWxlY3QvY29uc190cmVzClNlbGVjdFR5cGVQYXJhbWV0
ZXJzPUNSX0NvcmVfTWVtb3J5CkdyZXNUeXBlcz1ncHUKTXBpRGVmYXVsdD1ub25lCiMgSm9icyBr
ZWVwIHNsdXJtZCdzIHVubGltaXRlZCBsb2NrZWQgbWVtb3J5IChpdHMgdW5pdCBzZXRzIExpbWl0
TUVNTE9DSz1pbmZpbml0eSkgaW5zdGVhZCBvZiB0aGUKIyBzdWJtaXR0aW5nIHNoZWxsJ3MgKG9m
dGVuIDggTWlCKTogUkRNQSBhbmQgTkNDTCBvdmVyIEluZmluaUJhbmQgcmVnaXN0ZXIgbGFyZ2Ug
YnVmZmVycy4KUHJvcGFnYXRlUmVzb3VyY2VMaW1pdHNFeGNlcHQ9TUVNTE9DSwpQcm9jdHJhY2tU
eXBlPXByb2N0cmFjay9jZ3JvdXAKVGFza1BsdWdpbj10YXNrL2FmZmluaXR5LHRhc2svY2dyb3Vw
CkpvYkFjY3RHYXRoZXJUeXBlPWpvYmFjY3RfZ2F0aGVyL25vbmUKQWNjb3VudGluZ1N0b3JhZ2VU
eXBlPWFjY291bnRpbmdfc3RvcmFnZS9ub25lCiMgQ29udGFpbjogZXZlcnkgam9iIGdldHMgYW4g
ImV4dGVybiIgc3RlcCBvbiBlYWNoIG9mIGl0cyBub2RlcywgaW50byB3aGljaCBwYW1fc2x1cm1f
YWRvcHQgcHV0cwojIHRoZSBqb2Igb3duZXIncyBzc2ggc2Vzc2lvbnMgdGhlcmUgKFNjaGVkTUQg
cGFtX3NsdXJtX2Fkb3B0IGd1aWRlOyBpdCBpbXBsaWVzIEFsbG9jKS4KUHJvbG9nRmxhZ3M9QWxs
b2MsQ29udGFpbgpQcm9sb2c9L3Vzci9sb2NhbC9saWJleGVjL2dwdS1jbHVzdGVycy9wcm9sb2cu
c2gKRXBpbG9nPS91c3IvbG9jYWwvbGliZXhlYy9ncHUtY2x1c3RlcnMvZXBpbG9nLnNoCiMgVGhl
IFNLVSdzIENVREEvVUNYL01QSSBkZWZhdWx0cyBpbnRvIGVhY2ggdGFzayAod2hhdCAvZXRjL25j
Y2wuY29uZiBjYW5ub3QgZGVsaXZlcikuClRhc2tQcm9sb2c9L3Vzci9sb2NhbC9saWJleGVjL2dw
dS1jbHVzdGVycy9ncHVjbC10YXNrLWVudi5zaApUb3BvbG9neVBsdWdpbj10b3BvbG9neS90cmVl
CiMgMjogYSBET1dOIG5vZGUgcmV0dXJucyB3aGVuIGl0IHJlZ2lzdGVycyB3aXRoIGEgdmFsaWQg
Y29uZmlndXJhdGlvbiwgc28gYSBub2RlIHRoYXQgcmVib290ZWQgb3IKIyBjYW1lIHVwIGxhdGUg
KGFmdGVyIFJlc3VtZVRpbWVvdXQpIHJlam9pbnMgYnkgaXRzZWxmLCBhcyBpbiBBenVyZS9jeWNs
ZWNsb3VkLXNsdXJtJ3MgdGVtcGxhdGUuCiMgc2x1cm1kIHJ1bnMgdGhlIGhlYWx0aCBjaGVjayBi
ZWZvcmUgaXQgcmVnaXN0ZXJzOiBhbiB1bmhlYWx0aHkgbm9kZSBpcyBkcmFpbmVkIGFuZCBzdGF5
cyBvdXQuCiMgRHJhaW5zIChhbiBhZG1pbidzLCBhIGhlYWx0aCBjaGVjaydzLCB2YWxpZGF0ZSdz
KSBhcmUgbmV2ZXIgbGlmdGVkIGJ5IGl0LgpSZXR1cm5Ub1NlcnZpY2U9MgpTbHVybWN0bGRUaW1l
b3V0PTMwMApTbHVybWRUaW1lb3V0PTMwMApJbmFjdGl2ZUxpbWl0PTAKTWluSm9iQWdlPTMwMApL
aWxsV2FpdD0zMApXYWl0dGltZT0wCgojIE5vZGUgaGVhbHRoOiBmYWlsaW5nIGNoZWNrcyBkcmFp
biB0aGUgbm9kZSB3aXRoIGEgcmVhc29uIHN0YXJ0aW5nICJncHVjbDoiOwojIHRoZSBzYW1lIHBy
b2dyYW0gcmVzdW1lcyBvbmx5IGRyYWlucyBjYXJyeWluZyB0aGF0IHByZWZpeCAobmV2ZXIgYW4g
YWRtaW4ncyBvd24gZHJhaW4pLgpIZWFsdGhDaGVja1Byb2dyYW09L3Vzci9sb2NhbC9saWJleGVj
L2dwdS1jbHVzdGVycy9ncHVjbC1oZWFsdGguc2gKSGVhbHRoQ2hlY2tJbnRlcnZhbD0zMDAKSGVh
bHRoQ2hlY2tOb2RlU3RhdGU9QU5ZLENZQ0xFCgojIENvbmZpZ2xlc3M6IHNsdXJtZCBvbiB0aGUg
R1BVIG5vZGVzIGZldGNoZXMgc2x1cm0uY29uZiwgZ3Jlcy5jb25mLCBjZ3JvdXAuY29uZiwgdG9w
b2xvZ3kuY29uZiBhbmQKIyBwbHVnc3RhY2suY29uZiBmcm9tIHNsdXJtY3RsZCAoYHNsdXJtZCAt
LWNvbmYtc2VydmVyYCk7IGEgcmVzaXplIHJld3JpdGVzIHRoZW0gaGVyZSBvbmx5IGFuZCBydW5z
CiMgYHNjb250cm9sIHJlY29uZmlndXJlYCwgc28gbm8gbm9kZSByZXN0YXJ0cy4KIyBwb3dlcl9z
YXZlX21pbl9pbnRlcnZhbDogc2x1cm1jdGxkIHN0YXJ0cyBhIHBvd2VyIHByb2dyYW0gYXQgbW9z
dCBldmVyeSAzMCBzIChkZWZhdWx0IDA6IGFzCiMgb2Z0ZW4gYXMgbm9kZSBzdGF0ZXMgY2hhbmdl
LCAxLTEwIHMpLiBFYWNoIHByb2dyYW0gc2VuZHMgb25lIHN0YXJ0IG9yIGRlYWxsb2NhdGUgcGVy
IHNjYWxlIHNldCwKIyBhbmQgQXp1cmUgcmVmaWxscyBhIHJlc291cmNlJ3MgYWN0aW9uIGJ1Y2tl
dCBhdCBhIGZldyBhIG1pbnV0ZSAoTWljcm9zb2Z0IExlYXJuLCAiQ29tcHV0ZQojIHRocm90dGxp
bmcgbGltaXRzIik6IHN1c3BlbmRpbmcgMTAgbm9kZXMgZXZlcnkgMTAgcyBhY3Jvc3MgMTAgc2V0
cyBnb3QgODQxIG9mIDEsODQxIGNhbGxzCiMgdGhyb3R0bGVkLCBldmVyeSAzMCBzIG5vbmUgKGJl
bmNobWFya3MvcG93ZXJfc2NhbGUucHkpLiBBIFNsdXJtY3RsZFBhcmFtZXRlcnMgb3B0aW9uIChT
Y2hlZE1ECiMgc3JjL3NsdXJtY3RsZC9wb3dlcl9zYXZlLmM7IGVsYXN0aWNfY29tcHV0aW5nLmh0
bWwpLCAyNC4xMSB0byAyNi4wNSBhbGlrZS4KU2x1cm1jdGxkUGFyYW1ldGVycz1lbmFibGVfY29u
ZmlnbGVzcyxwb3dlcl9zYXZlX21pbl9pbnRlcnZhbD0zMAoKIyBQb3dlciBzYXZpbmc6IGFuIGlk
bGUgbm9kZSBpcyBkZWFsbG9jYXRlZCBieSBTdXNwZW5kUHJvZ3JhbSBhZnRlciBpdHMgcGFydGl0
aW9uJ3MKIyBTdXNwZW5kVGltZSAoY29tcHV0ZSBiaWxsaW5nIHN0b3BzLCB0aGUgVk0gYW5kIHNv
IGl0cyBuYW1lIHN1cnZpdmUpIGFuZCBzdGFydGVkIGJ5CiMgUmVzdW1lUHJvZ3JhbSB3aGVuIGEg
am9iIG5lZWRzIGl0LiBBIG5vZGUgbm90IHJlZ2lzdGVyZWQgd2l0aGluIFJlc3VtZVRpbWVvdXQg
aXMgc2V0IERPV04gYnkKIyBzbHVybWN0bGQsIGl0cyBqb2IgcmVxdWV1ZWQsIGFuZCBSZXN1bWVG
YWlsUHJvZ3JhbSBnaXZlcyBpdCBhICJncHVjbDogcG93ZXI6IiByZWFzb24gYW5kCiMgZGVhbGxv
Y2F0ZXMgaXQ7IGBncHVjbC1wb3dlciByZXR1cm5gIChhIHRpbWVyKSBtYWtlcyBzdWNoIHBvd2Vy
ZWQtZG93biBub2RlcyBpZGxlIGFnYWluLgojIE5vIGlkbGVfb25fbm9kZV9zdXNwZW5kOiBpdCBj
bGVhcnMgRFJBSU4gYW5kIEZBSUwgYXQgZXZlcnkgc3VzcGVuZCwgc28gYW4gYWRtaW4ncyBvciBh
IGhlYWx0aAojIGNoZWNrJ3MgZHJhaW4gd291bGQgYmUgZ29uZSBvbmNlIHRoZSBub2RlIHBvd2Vy
cyBkb3duLiBBIGRyYWluZWQgbm9kZSBpcyBwb3dlcmVkIGRvd24gd2l0aCBpdHMKIyBkcmFpbiwg
cmVhc29uIGFuZCBvd25lciBrZXB0LgojIFRyZWVXaWR0aCBpcyBTbHVybSdzIGRlZmF1bHQ6IHRo
ZSBvbGQgYWR2aWNlIG9mIDY1NTMzIGZvciBjbG91ZCBub2RlcyBpcyBnb25lIGZyb20gU2NoZWRN
RCdzCiMgZWxhc3RpYyBjb21wdXRpbmcgZ3VpZGUgc2luY2UgMjMuMTEsIGFuZCBhIGZsYXQgZmFu
LW91dCBvZiAxLDAwMCBub2RlcyBoYXMgc2x1cm1jdGxkIG9wZW4gZXZlcnkKIyBjb25uZWN0aW9u
IGl0c2VsZi4KSm9iUmVxdWV1ZT0xClN1c3BlbmRUaW1lPTkwMApTdXNwZW5kVGltZW91dD02MDAK
UmVzdW1lVGltZW91dD0xODAwClJlc3VtZVByb2dyYW09L3Vzci9sb2NhbC9saWJleGVjL2dwdS1j
bHVzdGVycy9yZXN1bWUuc2gKU3VzcGVuZFByb2dyYW09L3Vzci9sb2NhbC9saWJleGVjL2dwdS1j
bHVzdGVycy9zdXNwZW5kLnNoClJlc3VtZUZhaWxQcm9ncmFtPS91c3IvbG9jYWwvbGliZXhlYy9n
cHUtY2x1c3RlcnMvcmVzdW1lLWZhaWwuc2gKUmVzdW1lUmF0ZT0wClN1c3BlbmRSYXRlPTAKCiMg
Tm9kZXM6IG9uZSBsaW5lIHBlciBzY2FsZSBzZXQgKG9uZSBJbmZpbmlCYW5kIGZhYnJpYyBlYWNo
KS4KTm9kZU5hbWU9Z3B1LXBnMC1bMS0yXSBDUFVzPTk2IEJvYXJkcz0xIFNvY2tldHNQZXJCb2Fy
ZD0yIENvcmVzUGVyU29ja2V0PTQ4IFRocmVhZHNQZXJDb3JlPTEgUmVhbE1lbW9yeT0xODE5MzE3
IEdyZXM9Z3B1OmgxMDA6OCBGZWF0dXJlPWdwdSxncHUtcGcwLGgxMDAgU3RhdGU9Q0xPVUQKCiMg
UGFydGl0aW9uczogam9icyBnZXQgd2hvbGUgbm9kZXMgKGFsbCB0aGVpciBHUFVzIGFuZCB0aGUg
ZmFicmljIE5JQ3MpLiBNYXhOb2RlczogYSBqb2IgZml0cyBpbgojIG9uZSBzY2FsZSBzZXQsIG9u
ZSBJbmZpbmlCYW5kIGZhYnJpYzsgbm8gc3dpdGNoIGpvaW5zIHR3byAodG9wb2xvZ3kuY29uZiks
IHNvIGEgbGFyZ2VyIGpvYiB3b3VsZAojIHBlbmQgZm9yIGV2ZXIuIEVuZm9yY2VQYXJ0TGltaXRz
IHJlZnVzZXMgaXQgYXQgc3VibWlzc2lvbiBpbnN0ZWFkICgiTm9kZSBjb3VudCBzcGVjaWZpY2F0
aW9uCiMgaW52YWxpZCI7IGBzY29udHJvbCBzaG93IHBhcnRpdGlvbmAgc2hvd3MgTWF4Tm9kZXMs
IGBjbHVzdGVyY3RsIHBsYW5gIHRoZSBsYXJnZXN0IGpvYikuCkVuZm9yY2VQYXJ0TGltaXRzPUFO
WQpQYXJ0aXRpb25OYW1lPWdwdSBOb2Rlcz1ncHUtcGcwLVsxLTJdIERlZmF1bHQ9WUVTIE1heE5v
ZGVzPTIgTWF4VGltZT1JTkZJTklURSBTdGF0ZT1VUCBPdmVyU3Vic2NyaWJlPUVYQ0xVU0lWRSBT
dXNwZW5kVGltZT05MDAK
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
