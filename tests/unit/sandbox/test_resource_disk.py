"""The resource-disk substitution's pieces that run without a sandbox: which nodes get the disk,
the files placed on them, and the fstab generator's units for cloud-init's ephemeral0 line."""

from __future__ import annotations

import os
import py_compile
import subprocess

from clusterctl.sandbox.vm import boot, machine, substitutions

GENERATOR = "etc/systemd/system-generators/gpucl-sandbox-fstab-netdev"
CLOUD_INIT_LINE = (
    "/dev/disk/cloud/azure_resource-part1\t/mnt\tauto\t"
    "defaults,nofail,x-systemd.after=cloud-init-network.service,_netdev,comment=cloudconfig\t0\t2\n"
)


def test_only_sizes_with_a_resource_disk_get_one():
    assert boot.resource_disk_mib("Standard_ND96amsr_A100_v4") == boot.RESOURCE_DISK_MIB
    assert boot.resource_disk_mib("Standard_ND96asr_v4") == boot.RESOURCE_DISK_MIB
    assert boot.resource_disk_mib("Standard_ND96isr_H100_v5") == 0  # unverified: none given
    assert boot.resource_disk_mib("Standard_D8s_v5") == 0
    assert boot.resource_disk_mib("") == 0


def test_the_substitution_is_declared():
    names = [s.name for s in substitutions.SUBSTITUTIONS]
    assert "resource-disk" in names
    assert "resource-disk [machine]" in substitutions.explain()


def test_the_node_files_are_a_datasource_its_config_and_the_generator(tmp_path):
    files = machine.resource_disk_files()
    assert set(files) == {
        "etc/cloud/cloud.cfg.d/92-gpucl-sandbox-resource-disk.cfg",
        "usr/lib/python3/dist-packages/DataSourceNoCloudAzureResourceDisk.py",
        GENERATOR,
    }
    assert (
        "datasource_list: [NoCloudAzureResourceDisk, None]"
        in files["etc/cloud/cloud.cfg.d/92-gpucl-sandbox-resource-disk.cfg"]
    )
    source = tmp_path / "ds.py"
    source.write_text(files["usr/lib/python3/dist-packages/DataSourceNoCloudAzureResourceDisk.py"])
    py_compile.compile(str(source), doraise=True)
    machine.write_seed(tmp_path / "root", files)
    assert os.access(tmp_path / "root" / GENERATOR, os.X_OK)


def _generate(tmp_path, fstab: str) -> dict[str, str]:
    (tmp_path / "fstab").write_text(fstab)
    out = tmp_path / "out"
    out.mkdir()
    gen = tmp_path / "gen"
    gen.write_text(machine.resource_disk_files()[GENERATOR])
    env = {**os.environ, "SYSTEMD_FSTAB": str(tmp_path / "fstab")}
    subprocess.run(["sh", str(gen), str(out)], check=True, env=env)
    return {
        str(p.relative_to(out)): (os.readlink(p) if p.is_symlink() else p.read_text())
        for p in out.rglob("*")
        if p.is_file() or p.is_symlink()
    }


def test_cloud_init_ephemeral0_line_becomes_a_mount_after_its_network_stage(tmp_path):
    units = _generate(tmp_path, CLOUD_INIT_LINE)
    assert set(units) == {"mnt.mount", "remote-fs.target.wants/mnt.mount"}
    unit = units["mnt.mount"]
    assert "After= cloud-init-network.service" in unit
    assert "Before=remote-fs.target" not in unit  # nofail: wanted, not waited for
    assert "What=/dev/disk/cloud/azure_resource-part1\nWhere=/mnt\nType=auto\n" in unit
    assert "Options=defaults,nofail,_netdev,comment=cloudconfig\n" in unit


def test_entries_the_container_already_mounts_are_left_alone(tmp_path):
    fstab = (
        "# comment\n"
        "LABEL=gpucl-shared /shared xfs defaults,nofail 0 2\n"  # the platform unit's mount -a
        "sched:/home /home nfs _netdev,nofail 0 0\n"  # systemd's own generator
        "/dev/loop9p1 /data ext4 defaults 0 2\n"  # local: the platform unit's mount -a
    )
    assert _generate(tmp_path, fstab) == {}


def test_a_netdev_device_entry_without_nofail_is_required_by_remote_fs(tmp_path):
    units = _generate(tmp_path, "/dev/sdb1 /scratch ext4 _netdev 0 2\n")
    assert "Before=remote-fs.target" in units["scratch.mount"]
    assert "remote-fs.target.requires/scratch.mount" in units
