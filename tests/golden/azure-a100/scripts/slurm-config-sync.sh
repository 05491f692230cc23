#!/bin/bash
# Brings the scheduler's Slurm files to what the stack now says (cluster a100, stack
# azure-a100) and, when one changed, runs `scontrol reconfigure`: GPU nodes run configless, so
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
put /etc/slurm/slurm.conf <<'B64'
IyBzbHVybS5jb25mIGZvciBjbHVzdGVyIGExMDAgKHN0YWNrIGF6dXJlLWExMDApLiBSZW5kZXJl
ZCBieSBncHUtY2x1c3RlcnMgZnJvbQojIHRlbXBsYXRlcy9zbHVybS9zbHVybS5jb25mLmoyOiBl
ZGl0IHRoZSBzdGFjayBvciB0aGUgdGVtcGxhdGUsIG5vdCB0aGlzIGZpbGUuCkNsdXN0ZXJOYW1l
PWExMDAKU2x1cm1jdGxkSG9zdD1hMTAwLXNjaGVkdWxlcgpTbHVybVVzZXI9c2x1cm0KQXV0aFR5
cGU9YXV0aC9tdW5nZQpDcmVkVHlwZT1jcmVkL211bmdlClNsdXJtY3RsZFBvcnQ9NjgxNwpTbHVy
bWRQb3J0PTY4MTgKU3RhdGVTYXZlTG9jYXRpb249L3Zhci9zcG9vbC9zbHVybWN0bGQKU2x1cm1k
U3Bvb2xEaXI9L3Zhci9zcG9vbC9zbHVybWQKIyBObyBtYWlsIG9uIHRoZSBjbHVzdGVyOiBTbHVy
bSAyNC4xMSsgbG9ncyBhbiBlcnJvciBhdCBldmVyeSBzdGFydCB3aGVuIE1haWxQcm9nIGRvZXMg
bm90IGV4aXN0LgpNYWlsUHJvZz0vYmluL3RydWUKU2x1cm1jdGxkUGlkRmlsZT0vcnVuL3NsdXJt
L3NsdXJtY3RsZC5waWQKU2x1cm1kUGlkRmlsZT0vcnVuL3NsdXJtL3NsdXJtZC0lbi5waWQKU2x1
cm1jdGxkTG9nRmlsZT0vdmFyL2xvZy9zbHVybS9zbHVybWN0bGQubG9nClNsdXJtZExvZ0ZpbGU9
L3Zhci9sb2cvc2x1cm0vc2x1cm1kLSVuLmxvZwoKIyBTY2hlZHVsaW5nOiB3aG9sZSBjb3JlcyBh
bmQgbWVtb3J5IGFzIGNvbnN1bWFibGUgcmVzb3VyY2VzLCBHUFVzIGFzIEdSRVMuClNjaGVkdWxl
clR5cGU9c2NoZWQvYmFja2ZpbGwKU2VsZWN0VHlwZT1zZWxlY3QvY29uc190cmVzClNlbGVjdFR5
cGVQYXJhbWV0ZXJzPUNSX0NvcmVfTWVtb3J5CkdyZXNUeXBlcz1ncHUKTXBpRGVmYXVsdD1ub25l
ClByb2N0cmFja1R5cGU9cHJvY3RyYWNrL2Nncm91cApUYXNrUGx1Z2luPXRhc2svYWZmaW5pdHks
dGFzay9jZ3JvdXAKSm9iQWNjdEdhdGhlclR5cGU9am9iYWNjdF9nYXRoZXIvbm9uZQpBY2NvdW50
aW5nU3RvcmFnZVR5cGU9YWNjb3VudGluZ19zdG9yYWdlL25vbmUKUHJvbG9nRmxhZ3M9QWxsb2MK
UHJvbG9nPS91c3IvbG9jYWwvbGliZXhlYy9ncHUtY2x1c3RlcnMvcHJvbG9nLnNoCkVwaWxvZz0v
dXNyL2xvY2FsL2xpYmV4ZWMvZ3B1LWNsdXN0ZXJzL2VwaWxvZy5zaApUb3BvbG9neVBsdWdpbj10
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
cy4KCiMgUG93ZXIgc2F2aW5nIChpc3N1ZSAxMyk6IGFuIGlkbGUgbm9kZSBpcyBkZWFsbG9jYXRl
ZCBieSBTdXNwZW5kUHJvZ3JhbSBhZnRlciBpdHMgcGFydGl0aW9uJ3MKIyBTdXNwZW5kVGltZSAo
Y29tcHV0ZSBiaWxsaW5nIHN0b3BzLCB0aGUgVk0gYW5kIHNvIGl0cyBuYW1lIHN1cnZpdmUpIGFu
ZCBzdGFydGVkIGJ5CiMgUmVzdW1lUHJvZ3JhbSB3aGVuIGEgam9iIG5lZWRzIGl0LiBBIG5vZGUg
bm90IHJlZ2lzdGVyZWQgd2l0aGluIFJlc3VtZVRpbWVvdXQgaXMgc2V0IERPV04gYnkKIyBzbHVy
bWN0bGQsIGl0cyBqb2IgcmVxdWV1ZWQsIGFuZCBSZXN1bWVGYWlsUHJvZ3JhbSBnaXZlcyBpdCBh
ICJncHVjbDoiIHJlYXNvbiBhbmQKIyBkZWFsbG9jYXRlcyBpdC4gTm9kZXMgYXJlIGNyZWF0ZWQg
YnkgUHVsdW1pIHdpdGggdGhlaXIgc2NhbGUgc2V0OyBlYWNoIHJlZ2lzdGVycyB1bmRlciBhCiMg
ZGV0ZXJtaW5pc3RpYyBuYW1lICg8c2NhbGUgc2V0Pi08aW5zdGFuY2UgaWQgKyAxPikgYW5kIHRo
ZSBjb250cm9sbGVyIGxlYXJucyBpdHMgYWRkcmVzcyBhdAojIHJlZ2lzdHJhdGlvbiAodGhlIGRl
ZmF1bHQgZm9yIENMT1VEIG5vZGVzIHNpbmNlIFNsdXJtIDIzLjExKS4KU2x1cm1jdGxkUGFyYW1l
dGVycz1pZGxlX29uX25vZGVfc3VzcGVuZCxlbmFibGVfY29uZmlnbGVzcwpUcmVlV2lkdGg9NjU1
MzMKSm9iUmVxdWV1ZT0xClN1c3BlbmRUaW1lPTkwMApTdXNwZW5kVGltZW91dD02MDAKUmVzdW1l
VGltZW91dD0xODAwClJlc3VtZVByb2dyYW09L3Vzci9sb2NhbC9saWJleGVjL2dwdS1jbHVzdGVy
cy9yZXN1bWUuc2gKU3VzcGVuZFByb2dyYW09L3Vzci9sb2NhbC9saWJleGVjL2dwdS1jbHVzdGVy
cy9zdXNwZW5kLnNoClJlc3VtZUZhaWxQcm9ncmFtPS91c3IvbG9jYWwvbGliZXhlYy9ncHUtY2x1
c3RlcnMvcmVzdW1lLWZhaWwuc2gKUmVzdW1lUmF0ZT0wClN1c3BlbmRSYXRlPTAKCiMgTm9kZXM6
IG9uZSBsaW5lIHBlciBzY2FsZSBzZXQgKG9uZSBJbmZpbmlCYW5kIGZhYnJpYyBlYWNoKS4KTm9k
ZU5hbWU9Z3B1LXBnMC1bMS0yXSBDUFVzPTk2IEJvYXJkcz0xIFNvY2tldHNQZXJCb2FyZD0yIENv
cmVzUGVyU29ja2V0PTQ4IFRocmVhZHNQZXJDb3JlPTEgUmVhbE1lbW9yeT0xNzU5ODU5IEdyZXM9
Z3B1OmExMDA6OCBGZWF0dXJlPWdwdSxncHUtcGcwLGExMDAgU3RhdGU9Q0xPVUQKCiMgUGFydGl0
aW9uczogam9icyBnZXQgd2hvbGUgbm9kZXMgKGFsbCA4IEdQVXMgYW5kIHRoZSBmYWJyaWMgTklD
cykuClBhcnRpdGlvbk5hbWU9Z3B1IE5vZGVzPWdwdS1wZzAtWzEtMl0gRGVmYXVsdD1ZRVMgTWF4
VGltZT1JTkZJTklURSBTdGF0ZT1VUCBPdmVyU3Vic2NyaWJlPUVYQ0xVU0lWRSBTdXNwZW5kVGlt
ZT05MDA=
B64
put /etc/slurm/gres.conf <<'B64'
IyBncmVzLmNvbmYgZm9yIGNsdXN0ZXIgYTEwMDogZXZlcnkgR1BVIG5vZGUgaGFzIDggR1BVcyBh
dCAvZGV2L252aWRpYVswLTddLgpBdXRvRGV0ZWN0PW9mZgpOb2RlTmFtZT1ncHUtcGcwLVsxLTJd
IE5hbWU9Z3B1IFR5cGU9YTEwMCBGaWxlPS9kZXYvbnZpZGlhWzAtN10K
B64
put /etc/slurm/topology.conf <<'B64'
IyB0b3BvbG9neS5jb25mIGZvciBjbHVzdGVyIGExMDA6IGVhY2ggc2NhbGUgc2V0IGlzIG9uZSBJ
bmZpbmlCYW5kIGZhYnJpYyAoYSBsZWFmIHN3aXRjaCkuCiMgVGhlIHRyZWUgcGx1Z2luIHBhY2tz
IGEgam9iIGludG8gb25lIGxlYWYgd2hlbmV2ZXIgaXQgZml0czsgYC0tc3dpdGNoZXM9MWAgbWFr
ZXMgdGhhdCBhIGhhcmQgcnVsZS4KIyBUaGUgcm9vdCBvbmx5IGpvaW5zIHRoZSBsZWF2ZXMgb3Zl
ciBFdGhlcm5ldDogYSBqb2IgdGhhdCBzcGFucyB0d28gbGVhdmVzIGdldHMgbm8gUkRNQSBiZXR3
ZWVuIHRoZW0uClN3aXRjaE5hbWU9Z3B1LXBnMCBOb2Rlcz1ncHUtcGcwLVsxLTJdClN3aXRjaE5h
bWU9cm9vdCBTd2l0Y2hlcz1ncHUtcGcwCg==
B64
if [ -z "$changed" ]; then
  echo "slurm-config-sync: unchanged"
  exit 0
fi
echo "slurm-config-sync: updated$changed"
if systemctl is-active --quiet slurmctld; then
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
else
  systemctl restart slurmctld
fi
