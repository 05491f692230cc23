#!/bin/bash
# GPU node bring-up after packages are installed (run once by cloud-init):
# fabric manager, peer memory, persistence mode, then slurmd under its deterministic name.
set -eu
libexec=/usr/local/libexec/gpu-clusters

systemctl enable --now nvidia-fabricmanager
for _ in $(seq 1 60); do
  systemctl is-active --quiet nvidia-fabricmanager && break
  sleep 5
done
systemctl is-active --quiet nvidia-fabricmanager || echo "gpu-node-setup: nvidia-fabricmanager is not active" >&2
modprobe nvidia-peermem
nvidia-smi -pm 1

# The scratch (local NVMe) is assembled and mounted by gpucl-scratch.service at every boot, before
# slurmd: the disks are wiped on deallocate, and a reboot must not leave an empty directory.
systemctl daemon-reload
systemctl enable gpucl-scratch.service
systemctl start gpucl-scratch.service

node=$("$libexec/node-name.sh")
hostnamectl set-hostname "$node"
mkdir -p /etc/systemd/system/slurmd.service.d
# Configless: slurmd fetches slurm.conf, gres.conf, cgroup.conf, topology.conf and plugstack.conf
# from slurmctld. Quoted: systemd splits an unquoted Environment= line at spaces ("-N" would lose the name).
# The NFS mounts are nofail, so remote-fs.target does not wait for them: without RequiresMountsFor
# slurmd (and its health check) started before /home and /sched at every later boot or power-up.
cat > /etc/systemd/system/slurmd.service.d/gpu-clusters.conf <<UNIT
[Unit]
After=gpucl-scratch.service munge.service remote-fs.target
Requires=gpucl-scratch.service
RequiresMountsFor=/mnt/nvme /home /sched

[Service]
Environment="SLURMD_OPTIONS=-N $node --conf-server a100-scheduler:6817"
Environment="PMIX_MCA_ptl=^usock" "PMIX_MCA_psec=none" "PMIX_SYSTEM_TMPDIR=/var/empty" "PMIX_MCA_gds=hash"
UNIT
systemctl daemon-reload
# The munge package started munged with a key of its own before ours was in place: restart it.
systemctl enable munge
systemctl restart munge
# The slurmd package may have started slurmd before slurm.conf existed: restart, not --now.
systemctl enable slurmd
systemctl restart slurmd
