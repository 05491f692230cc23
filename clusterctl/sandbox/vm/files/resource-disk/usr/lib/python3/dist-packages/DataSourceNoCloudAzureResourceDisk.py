"""gpucl sandbox (substitution resource-disk): NoCloud plus what cloud-init's Azure datasource does
with the VM's resource (temp) disk, and nothing else.

Azure's datasource (cloudinit/sources/DataSourceAzure.py) names the disk at RESOURCE_DISK_PATH
ephemeral0 (ds_cfg disk_aliases, returned by device_name_to_device) and, when that disk exists,
merges BUILTIN_CLOUD_EPHEMERAL_DISK_CONFIG into its cloud config: partition it (GPT, one partition)
and make ext4 on ephemeral0.1. cc_mounts then adds its default `ephemeral0 /mnt` entry (fstab:
defaults,nofail,x-systemd.after=cloud-init-network.service,_netdev) and mounts it. NoCloud's base
class answers None for ephemeral0, so without this nothing is mounted at /mnt.
Not done here: Azure's reformat of a new (NTFS) resource disk after deallocation
(address_ephemeral_resize); the sandbox keeps the disk's contents across power cycles.
"""

import os

from cloudinit import sources, util
from cloudinit.sources import DataSourceNoCloud

RESOURCE_DISK_PATH = "/dev/disk/cloud/azure_resource"
EPHEMERAL_DISK_CONFIG = {
    "disk_setup": {"ephemeral0": {"table_type": "gpt", "layout": [100], "overwrite": True}},
    "fs_setup": [{"filesystem": "ext4", "device": "ephemeral0.1"}],
}


class DataSourceNoCloudAzureResourceDisk(DataSourceNoCloud.DataSourceNoCloud):
    def _get_data(self):
        if not super()._get_data():
            return False
        # Azure's keeps this cloud config in self.cfg (its get_config_obj); NoCloud has none
        self.cfg = EPHEMERAL_DISK_CONFIG if os.path.exists(RESOURCE_DISK_PATH) else {}
        return True

    def get_config_obj(self):
        return util.mergemanydict([super().get_config_obj(), getattr(self, "cfg", {})])

    def device_name_to_device(self, name):
        if name == "ephemeral0":
            return RESOURCE_DISK_PATH
        return super().device_name_to_device(name)


datasources = [(DataSourceNoCloudAzureResourceDisk, (sources.DEP_FILESYSTEM,))]


def get_datasource_list(depends):
    return sources.list_from_depends(depends, datasources)
