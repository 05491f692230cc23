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

"$libexec/nvme-raid.sh"
mkdir -p /mnt/nvme/enroot/runtime /mnt/nvme/enroot/cache /mnt/nvme/enroot/data /mnt/nvme/jobs
chmod 1777 /mnt/nvme/enroot/runtime /mnt/nvme/enroot/cache /mnt/nvme/enroot/data /mnt/nvme/jobs

node=$("$libexec/node-name.sh")
hostnamectl set-hostname "$node"
mkdir -p /etc/systemd/system/slurmd.service.d
cat > /etc/systemd/system/slurmd.service.d/gpu-clusters.conf <<UNIT
[Service]
Environment=SLURMD_OPTIONS=-N $node
Environment=PMIX_MCA_ptl=^usock PMIX_MCA_psec=none PMIX_SYSTEM_TMPDIR=/var/empty PMIX_MCA_gds=hash
UNIT
systemctl daemon-reload
systemctl enable --now munge
systemctl enable --now slurmd
