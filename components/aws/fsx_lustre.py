"""FsxLustreFileSystem: kubernetes.sharedFilesystem on EKS, an FSx for Lustre PERSISTENT_2 file
system in the GPU nodes' subnet, reachable on Lustre's ports from the nodes only.

Its own security group lets in TCP 988 and 1018-1023 from itself (the file servers talk to each
other) and from the EKS cluster security group, which every node carries; the cluster group gets
the same ports from the file system's group (Lustre servers open connections to clients too).
Nothing else is opened. The file system is protected unless keepOnDestroy is false, like Slurm's
/home (StorageSpec.keepOnDestroy). Facts and their sources: clusterctl/spec/lustre.py.
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from clusterctl.spec.lustre import (
    FSX_DEPLOYMENT_TYPE,
    FSX_LUSTRE_VERSION,
    LUSTRE_PORTS,
)
from clusterctl.spec.model import SharedFilesystemSpec


class FsxLustreFileSystem(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        fs: SharedFilesystemSpec,
        *,
        vpc_id: pulumi.Input[str],
        subnet_id: pulumi.Input[str],
        node_security_group_id: pulumi.Input[str],
        tags: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-clusters:aws:FsxLustreFileSystem", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.group = aws.ec2.SecurityGroup(
            f"{name}-sg",
            vpc_id=vpc_id,
            description="FSx for Lustre: Lustre's ports from the EKS nodes and between its servers",
            tags={**tags, "Name": name},
            opts=child,
        )
        self.rules: list[pulumi.Resource] = []
        for low, high in LUSTRE_PORTS:
            ports = f"{low}" if low == high else f"{low}-{high}"
            for who, group, source in (
                ("self", self.group.id, self.group.id),
                ("nodes", self.group.id, node_security_group_id),
                ("to-nodes", node_security_group_id, self.group.id),
            ):
                self.rules.append(
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-{who}-{ports}",
                        security_group_id=group,
                        referenced_security_group_id=source,
                        ip_protocol="tcp",
                        from_port=low,
                        to_port=high,
                        description=f"Lustre TCP {ports}",
                        tags=tags,
                        opts=child,
                    )
                )
        for who, target, description in (
            ("nodes", node_security_group_id, "Lustre servers to the nodes' Lustre ports"),
            ("self", self.group.id, "Lustre servers to each other"),
        ):
            self.rules.append(
                aws.vpc.SecurityGroupEgressRule(
                    f"{name}-out-{who}",
                    security_group_id=self.group.id,
                    referenced_security_group_id=target,
                    ip_protocol="tcp",
                    from_port=LUSTRE_PORTS[0][0],
                    to_port=LUSTRE_PORTS[-1][1],
                    description=description,
                    tags=tags,
                    opts=child,
                )
            )
        self.file_system = aws.fsx.LustreFileSystem(
            f"{name}-fs",
            deployment_type=FSX_DEPLOYMENT_TYPE,
            storage_type="SSD",
            storage_capacity=fs.size_gib,
            per_unit_storage_throughput=fs.throughput_mbps_per_tib,
            file_system_type_version=FSX_LUSTRE_VERSION,
            subnet_ids=subnet_id,  # one subnet: the provider takes it as a string (pulumi-aws 7)
            security_group_ids=[self.group.id],
            tags={**tags, "Name": name, "gpu-clusters:role": "storage"},
            opts=pulumi.ResourceOptions(
                parent=self, protect=fs.keep_on_destroy, depends_on=self.rules
            ),
        )
        self.register_outputs(
            {
                "fileSystemId": self.file_system.id,
                "dnsName": self.file_system.dns_name,
                "mountName": self.file_system.mount_name,
            }
        )
