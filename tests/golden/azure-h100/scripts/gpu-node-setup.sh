#!/bin/bash
# GPU node bring-up after packages are installed (run once by cloud-init):
# fabric manager or IMEX (as the node shape has them), peer memory, persistence mode, then slurmd
# under its deterministic name.
set -eu
libexec=/usr/local/libexec/gpu-clusters

node=$("$libexec/node-name.sh")
hostnamectl set-hostname "$node"
mkdir -p /etc/systemd/system/slurmd.service.d
# Configless: slurmd fetches slurm.conf, gres.conf, cgroup.conf, topology.conf and plugstack.conf
# from slurmctld. Quoted: systemd splits an unquoted Environment= line at spaces ("-N" would lose the name).
# The NFS mounts are nofail, so remote-fs.target does not wait for them, and a boot while the
# scheduler is away leaves them failed: slurmd (and its health check) starts only once
# gpucl-mounts.sh --wait has them mounted, retrying for as long as that takes. Ordered after their
# mount units (the boot's own try, and at shutdown slurmd stops before they unmount), not
# RequiresMountsFor: a failed mount would fail slurmd's start for good (no Restart= after a
# dependency failure).
cat > /etc/systemd/system/slurmd.service.d/gpu-clusters.conf <<UNIT
[Unit]
After=gpucl-scratch.service munge.service remote-fs.target home.mount sched.mount
Requires=gpucl-scratch.service
RequiresMountsFor=/nvme

[Service]
ExecStartPre=$libexec/gpucl-mounts.sh --wait
Environment="SLURMD_OPTIONS=-N $node --conf-server h100-scheduler:6817"
Environment="PMIX_MCA_ptl=^usock" "PMIX_MCA_psec=none" "PMIX_SYSTEM_TMPDIR=/var/empty" "PMIX_MCA_gds=hash"
UNIT
# One `systemctl enable` for every unit: each enable reloads systemd (it also loads the drop-in
# above and the units cloud-init wrote); six reloads took a VM's systemd ~3 s of CPU in all.
# The scratch (local NVMe) is assembled and mounted by gpucl-scratch.service at every boot, before
# slurmd: the disks are wiped on deallocate, and a reboot must not leave an empty directory.
systemctl enable nvidia-fabricmanager gpucl-scratch.service munge slurmd
systemctl start nvidia-fabricmanager
for _ in $(seq 1 60); do
  systemctl is-active --quiet nvidia-fabricmanager && break
  sleep 5
done
systemctl is-active --quiet nvidia-fabricmanager || echo "gpu-node-setup: nvidia-fabricmanager is not active" >&2
modprobe nvidia-peermem
nvidia-smi -pm 1
systemctl start gpucl-scratch.service
# The munge package started munged with a key of its own before ours was in place: restart it.
systemctl restart munge
# The slurmd package may have started slurmd before slurm.conf existed: restart, not --now.
systemctl restart slurmd
