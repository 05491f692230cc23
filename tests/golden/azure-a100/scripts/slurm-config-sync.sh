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
dGluZ1N0b3JhZ2VUeXBlPWFjY291bnRpbmdfc3RvcmFnZS9ub25lClByb2xvZ0ZsYWdzPUFsbG9j
ClByb2xvZz0vdXNyL2xvY2FsL2xpYmV4ZWMvZ3B1LWNsdXN0ZXJzL3Byb2xvZy5zaApFcGlsb2c9
L3Vzci9sb2NhbC9saWJleGVjL2dwdS1jbHVzdGVycy9lcGlsb2cuc2gKIyBUaGUgU0tVJ3MgQ1VE
QS9VQ1gvTVBJIGRlZmF1bHRzIGludG8gZWFjaCB0YXNrICh3aGF0IC9ldGMvbmNjbC5jb25mIGNh
bm5vdCBkZWxpdmVyKS4KVGFza1Byb2xvZz0vdXNyL2xvY2FsL2xpYmV4ZWMvZ3B1LWNsdXN0ZXJz
L2dwdWNsLXRhc2stZW52LnNoClRvcG9sb2d5UGx1Z2luPXRvcG9sb2d5L3RyZWUKIyAyOiBhIERP
V04gbm9kZSByZXR1cm5zIHdoZW4gaXQgcmVnaXN0ZXJzIHdpdGggYSB2YWxpZCBjb25maWd1cmF0
aW9uLCBzbyBhIG5vZGUgdGhhdCByZWJvb3RlZCBvcgojIGNhbWUgdXAgbGF0ZSAoYWZ0ZXIgUmVz
dW1lVGltZW91dCkgcmVqb2lucyBieSBpdHNlbGYsIGFzIGluIEF6dXJlL2N5Y2xlY2xvdWQtc2x1
cm0ncyB0ZW1wbGF0ZS4KIyBzbHVybWQgcnVucyB0aGUgaGVhbHRoIGNoZWNrIGJlZm9yZSBpdCBy
ZWdpc3RlcnM6IGFuIHVuaGVhbHRoeSBub2RlIGlzIGRyYWluZWQgYW5kIHN0YXlzIG91dC4KIyBE
cmFpbnMgKGFuIGFkbWluJ3MsIGEgaGVhbHRoIGNoZWNrJ3MsIHZhbGlkYXRlJ3MpIGFyZSBuZXZl
ciBsaWZ0ZWQgYnkgaXQuClJldHVyblRvU2VydmljZT0yClNsdXJtY3RsZFRpbWVvdXQ9MzAwClNs
dXJtZFRpbWVvdXQ9MzAwCkluYWN0aXZlTGltaXQ9MApNaW5Kb2JBZ2U9MzAwCktpbGxXYWl0PTMw
CldhaXR0aW1lPTAKCiMgTm9kZSBoZWFsdGg6IGZhaWxpbmcgY2hlY2tzIGRyYWluIHRoZSBub2Rl
IHdpdGggYSByZWFzb24gc3RhcnRpbmcgImdwdWNsOiI7CiMgdGhlIHNhbWUgcHJvZ3JhbSByZXN1
bWVzIG9ubHkgZHJhaW5zIGNhcnJ5aW5nIHRoYXQgcHJlZml4IChuZXZlciBhbiBhZG1pbidzIG93
biBkcmFpbikuCkhlYWx0aENoZWNrUHJvZ3JhbT0vdXNyL2xvY2FsL2xpYmV4ZWMvZ3B1LWNsdXN0
ZXJzL2dwdWNsLWhlYWx0aC5zaApIZWFsdGhDaGVja0ludGVydmFsPTMwMApIZWFsdGhDaGVja05v
ZGVTdGF0ZT1BTlksQ1lDTEUKCiMgQ29uZmlnbGVzczogc2x1cm1kIG9uIHRoZSBHUFUgbm9kZXMg
ZmV0Y2hlcyBzbHVybS5jb25mLCBncmVzLmNvbmYsIGNncm91cC5jb25mLCB0b3BvbG9neS5jb25m
IGFuZAojIHBsdWdzdGFjay5jb25mIGZyb20gc2x1cm1jdGxkIChgc2x1cm1kIC0tY29uZi1zZXJ2
ZXJgKTsgYSByZXNpemUgcmV3cml0ZXMgdGhlbSBoZXJlIG9ubHkgYW5kIHJ1bnMKIyBgc2NvbnRy
b2wgcmVjb25maWd1cmVgLCBzbyBubyBub2RlIHJlc3RhcnRzLgpTbHVybWN0bGRQYXJhbWV0ZXJz
PWVuYWJsZV9jb25maWdsZXNzCgojIFBvd2VyIHNhdmluZzogYW4gaWRsZSBub2RlIGlzIGRlYWxs
b2NhdGVkIGJ5IFN1c3BlbmRQcm9ncmFtIGFmdGVyIGl0cyBwYXJ0aXRpb24ncwojIFN1c3BlbmRU
aW1lIChjb21wdXRlIGJpbGxpbmcgc3RvcHMsIHRoZSBWTSBhbmQgc28gaXRzIG5hbWUgc3Vydml2
ZSkgYW5kIHN0YXJ0ZWQgYnkKIyBSZXN1bWVQcm9ncmFtIHdoZW4gYSBqb2IgbmVlZHMgaXQuIEEg
bm9kZSBub3QgcmVnaXN0ZXJlZCB3aXRoaW4gUmVzdW1lVGltZW91dCBpcyBzZXQgRE9XTiBieQoj
IHNsdXJtY3RsZCwgaXRzIGpvYiByZXF1ZXVlZCwgYW5kIFJlc3VtZUZhaWxQcm9ncmFtIGdpdmVz
IGl0IGEgImdwdWNsOiBwb3dlcjoiIHJlYXNvbiBhbmQKIyBkZWFsbG9jYXRlcyBpdDsgYGdwdWNs
LXBvd2VyIHJldHVybmAgKGEgdGltZXIpIG1ha2VzIHN1Y2ggcG93ZXJlZC1kb3duIG5vZGVzIGlk
bGUgYWdhaW4uCiMgTm8gaWRsZV9vbl9ub2RlX3N1c3BlbmQ6IGl0IGNsZWFycyBEUkFJTiBhbmQg
RkFJTCBhdCBldmVyeSBzdXNwZW5kLCBzbyBhbiBhZG1pbidzIG9yIGEgaGVhbHRoCiMgY2hlY2sn
cyBkcmFpbiB3b3VsZCBiZSBnb25lIG9uY2UgdGhlIG5vZGUgcG93ZXJzIGRvd24uIEEgZHJhaW5l
ZCBub2RlIGlzIHBvd2VyZWQgZG93biB3aXRoIGl0cwojIGRyYWluLCByZWFzb24gYW5kIG93bmVy
IGtlcHQuClRyZWVXaWR0aD02NTUzMwpKb2JSZXF1ZXVlPTEKU3VzcGVuZFRpbWU9OTAwClN1c3Bl
bmRUaW1lb3V0PTYwMApSZXN1bWVUaW1lb3V0PTE4MDAKUmVzdW1lUHJvZ3JhbT0vdXNyL2xvY2Fs
L2xpYmV4ZWMvZ3B1LWNsdXN0ZXJzL3Jlc3VtZS5zaApTdXNwZW5kUHJvZ3JhbT0vdXNyL2xvY2Fs
L2xpYmV4ZWMvZ3B1LWNsdXN0ZXJzL3N1c3BlbmQuc2gKUmVzdW1lRmFpbFByb2dyYW09L3Vzci9s
b2NhbC9saWJleGVjL2dwdS1jbHVzdGVycy9yZXN1bWUtZmFpbC5zaApSZXN1bWVSYXRlPTAKU3Vz
cGVuZFJhdGU9MAoKIyBOb2Rlczogb25lIGxpbmUgcGVyIHNjYWxlIHNldCAob25lIEluZmluaUJh
bmQgZmFicmljIGVhY2gpLgpOb2RlTmFtZT1ncHUtcGcwLVsxLTJdIENQVXM9OTYgQm9hcmRzPTEg
U29ja2V0c1BlckJvYXJkPTIgQ29yZXNQZXJTb2NrZXQ9NDggVGhyZWFkc1BlckNvcmU9MSBSZWFs
TWVtb3J5PTE3NTk4NTkgR3Jlcz1ncHU6YTEwMDo4IEZlYXR1cmU9Z3B1LGdwdS1wZzAsYTEwMCBT
dGF0ZT1DTE9VRAoKIyBQYXJ0aXRpb25zOiBqb2JzIGdldCB3aG9sZSBub2RlcyAoYWxsIHRoZWly
IEdQVXMgYW5kIHRoZSBmYWJyaWMgTklDcykuClBhcnRpdGlvbk5hbWU9Z3B1IE5vZGVzPWdwdS1w
ZzAtWzEtMl0gRGVmYXVsdD1ZRVMgTWF4VGltZT1JTkZJTklURSBTdGF0ZT1VUCBPdmVyU3Vic2Ny
aWJlPUVYQ0xVU0lWRSBTdXNwZW5kVGltZT05MDAK
B64
put /etc/slurm/gres.conf <<'B64'
IyBncmVzLmNvbmYgZm9yIGNsdXN0ZXIgYTEwMDogZXZlcnkgR1BVIG5vZGUgaGFzIDggR1BVcyBh
dCAvZGV2L252aWRpYVswLTddLgpBdXRvRGV0ZWN0PW9mZgpOb2RlTmFtZT1ncHUtcGcwLVsxLTJd
IE5hbWU9Z3B1IFR5cGU9YTEwMCBGaWxlPS9kZXYvbnZpZGlhWzAtN10K
B64
put /etc/slurm/topology.conf <<'B64'
IyB0b3BvbG9neS5jb25mIGZvciBjbHVzdGVyIGExMDA6IGVhY2ggc2NhbGUgc2V0IGlzIG9uZSBJ
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
