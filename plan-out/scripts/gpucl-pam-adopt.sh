#!/bin/bash
# gpucl-pam-adopt (run once by cloud-init on a GPU node): an ssh login needs a job on this node,
# and lands in that job's cgroup (its GPUs, CPUs and memory; killed with the job), as SchedMD's
# pam_slurm_adopt guide sets it up (slurm.conf PrologFlags=Contain gives every job the "extern"
# step it adopts into). Root and the admins listed in /etc/security/gpucl-adopt-access.conf log in without one.
set -eu
pam=${GPUCL_PAM_DIR:-/etc/pam.d}
# The last modules of sshd's account stack, after common-account: pam_access first and
# `sufficient`, so an admin skips pam_slurm_adopt; failures denied, not let through unconfined
# (the guide's production advice: action_adopt_failure=deny, action_generic_failure=deny).
if ! grep -q 'pam_slurm_adopt' "$pam/sshd"; then
  sed -i '/^@include common-account/a account sufficient pam_access.so accessfile=/etc/security/gpucl-adopt-access.conf\naccount required pam_slurm_adopt.so action_adopt_failure=deny action_generic_failure=deny' "$pam/sshd"
fi
grep -q '^account required pam_slurm_adopt.so' "$pam/sshd" || {
  echo "gpucl-pam-adopt: no '@include common-account' in $pam/sshd to put pam_slurm_adopt after" >&2
  exit 1
}
# pam_systemd would move the adopted session out of the job's cgroup into a logind session scope:
# the guide says to disable it in every file sshd includes (here: common-session). First the
# managed way (pam-auth-update keeps it off across package updates), then any line left.
if [ "$pam" = /etc/pam.d ]; then pam-auth-update --disable systemd >/dev/null 2>&1 || true; fi
sed -i 's/^\(-\{0,1\}session[[:space:]].*pam_systemd\.so.*\)$/# gpu-clusters (pam_slurm_adopt): \1/' "$pam/common-session"
