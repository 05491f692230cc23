#!/bin/bash
# Restores from a backup of the scheduler's data disk (/shared: /sched, Slurm's state, the
# accounting database, Prometheus, /home) of cluster a100, stack azure-a100.
# Run where `az` is logged in to the cluster's subscription, with SSH set to the stack output
# sshCommand. The disk itself is never replaced (Pulumi owns it): a backup is copied to a new disk,
# attached at /mnt/restore on the scheduler, and what you choose is copied back.
#   restore-shared.sh list               the backups (incremental snapshots), newest first
#   restore-shared.sh attach SNAPSHOT    a disk made from SNAPSHOT, mounted at /mnt/restore
#   restore-shared.sh rollback           the whole of /shared back to the attached backup
#                                        (Slurm, the database and NFS stopped meanwhile)
#   restore-shared.sh detach             unmounts, detaches and deletes the restored disk
# Azure Disk Backup restores only to a new disk (Microsoft Learn, backup/restore-managed-disks).
set -euo pipefail
rg='rg-a100-azure-a100'
snapshots='rg-a100-azure-a100-snapshots'
disk='a100-shared-restored'
remote() {
  [ -n "${SSH:-}" ] || { echo "restore-shared: set SSH to the stack output sshCommand" >&2; exit 2; }
  $SSH "sudo bash -euo pipefail -c '$1'"
}
scheduler_vm() {
  az vm list -g "$rg" --query "[?tags.\"gpu-clusters:role\"=='scheduler'].name | [0]" -o tsv
}
case "${1:-}" in
  list)
    az snapshot list -g "$snapshots" \
      --query "reverse(sort_by([], &timeCreated))[].{id:id, created:timeCreated, gib:diskSizeGB}" \
      -o table
    ;;
  attach)
    snapshot=${2:?restore-shared: attach needs a snapshot id (restore-shared.sh list)}
    az disk create -g "$rg" -n "$disk" --source "$snapshot" --sku Premium_LRS \
      --tags gpu-clusters:stack='azure-a100' gpu-clusters:cluster='a100' \
      gpu-clusters:role=restore -o none
    az vm disk attach -g "$rg" --vm-name "$(scheduler_vm)" --name "$disk" --lun 1 -o none
    # the copy has the live file system's XFS UUID (nouuid); mounted read-write, its log from the
    # crash-consistent snapshot is replayed: it is a throwaway copy
    remote "mkdir -p /mnt/restore && udevadm settle && mount -t xfs -o nouuid /dev/disk/azure/scsi1/lun1 /mnt/restore"
    echo "restore-shared: the backup is at /mnt/restore on the scheduler;" \
      "copy files back with rsync, or run: restore-shared.sh rollback"
    ;;
  rollback)
    remote "mountpoint -q /mnt/restore && systemctl stop slurmctld prometheus nfs-server && \
      rsync -aHAX --delete /mnt/restore/ /shared/ && systemctl start nfs-server prometheus slurmctld"
    echo "restore-shared: /shared is the backup's again; Slurm, the database and NFS are back"
    ;;
  detach)
    remote "umount /mnt/restore 2>/dev/null || true"
    az vm disk detach -g "$rg" --vm-name "$(scheduler_vm)" --name "$disk" -o none
    az disk delete -g "$rg" -n "$disk" --yes -o none
    echo "restore-shared: the restored disk is detached and deleted"
    ;;
  *)
    sed -n '2,13p' "$0" >&2
    exit 2
    ;;
esac
