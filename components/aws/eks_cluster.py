"""EksGpuCluster: an EKS cluster whose GPU node groups talk over EFA, with the GPU add-ons.

VPC (private subnets, one NAT) -> IAM roles -> EKS control plane (API authentication, an admin
access entry for the deployer) -> system node group + one GPU node group per partition (EFA
launch template, placement group, one subnet, sized by the cluster autoscaler) -> Kubernetes
add-ons over the cluster's kubeconfig.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from clusterctl import outputs as out
from clusterctl.render.kubernetes import shared_volume_docs
from clusterctl.spec.catalog import catalog
from clusterctl.spec.defaults import head_sku
from clusterctl.spec.kubernetes import (
    eks_cluster_name,
    eks_release_parameter,
    eks_support_type,
    kubernetes_version,
    nccl_launcher,
)
from clusterctl.spec.lustre import FSX_CSI_ADDON, shared_filesystem
from clusterctl.spec.model import ClusterSpec
from clusterctl.spec.tags import cloud_tags, k8s_labels
from components.aws.access import EksAdminAccess, deployer_principal
from components.aws.cluster_autoscaler import EksAutoscalerIdentity
from components.aws.efa_security_group import EfaSecurityGroup
from components.aws.fsx_lustre import FsxLustreFileSystem
from components.aws.gpu_node_group import EksGpuNodeGroup
from components.aws.iam import POD_ROLES, EksIamRoles
from components.aws.kubeconfig import eks_kubeconfig
from components.aws.system_node_group import EksSystemNodeGroup
from components.aws.vpc import EksVpc
from components.k8s.gpu_addons import KubernetesGpuAddons

CONTROL_PLANE_LOGS = ["api", "audit", "authenticator"]
CONTROL_PLANE_LOG_DAYS = 30
"""Retention of the control plane's log group. EKS writes to /aws/eks/<cluster>/cluster and
creates that group itself, untagged and kept forever, unless it exists first (Amazon EKS user
guide, "Send control plane logs to CloudWatch Logs"; terraform-aws-eks creates it before the
cluster for the same reason): the stack makes it, tagged, so `down` deletes and proves it."""
MANAGED_ADDONS = (
    "eks-pod-identity-agent", "vpc-cni", "coredns", "kube-proxy", "aws-ebs-csi-driver"
)  # fmt: skip
"""The Pod Identity agent first: the add-ons with a role in POD_ROLES get their credentials
through it (IMDS is out of pods' reach). Without the EBS CSI driver no persistent volume binds
(Kubernetes removed its in-tree EBS plugin in 1.27); the default StorageClass is rendered with
the manifests (clusterctl.render.kubernetes)."""


ADDON_CONFIG = {"vpc-cni": json.dumps({"enableNetworkPolicy": "true"})}
"""Add-on configuration values: the VPC CNI's network policy agent enforces NetworkPolicy (the
nccl-tests namespace's default deny); without it EKS accepts policies and enforces none (Amazon
EKS user guide, "Limit pod traffic with Kubernetes network policies": `enableNetworkPolicy`)."""


def _vpc_config(spec: ClusterSpec, private_ids: list) -> aws.eks.ClusterVpcConfigArgs:
    """Public: the endpoint answers only `ssh.allowedCidrs` (never empty: AWS reads that as
    0.0.0.0/0; rules_k8s.api_server_reach refuses it first). Private: no public endpoint."""
    private = spec.kubernetes.private_api_server
    return aws.eks.ClusterVpcConfigArgs(
        subnet_ids=private_ids,
        endpoint_private_access=True,
        endpoint_public_access=not private,
        public_access_cidrs=None if private else list(spec.ssh.allowed_cidrs),
    )


def managed_addons(spec: ClusterSpec) -> tuple[str, ...]:
    """MANAGED_ADDONS, and the FSx CSI driver with a shared Lustre file system. The FSx driver
    gets no role: it only mounts the stack's own file system (a static volume), which needs no
    AWS call; a role would only serve dynamic provisioning (CreateFileSystem), unused here."""
    return MANAGED_ADDONS + ((FSX_CSI_ADDON,) if shared_filesystem(spec) else ())


def addon_version(addon: str, version: str, opts) -> pulumi.Output[str]:
    """The add-on's default version for this Kubernetes version (the one EKS validates for it),
    resolved at `up`: a version bump moves the add-on with the cluster instead of leaving it at
    the creation-day version (terraform-aws-eks resolves it so: data aws_eks_addon_version)."""
    invoke = pulumi.InvokeOptions(parent=opts.parent)
    return aws.eks.get_addon_version_output(
        addon_name=addon, kubernetes_version=version, most_recent=False, opts=invoke
    ).version


def ami_release(cat, role: str, version: str, opts) -> pulumi.Output[str]:
    """The newest EKS AMI release for `version`, read from its SSM public parameter at `up`: the
    node group's releaseVersion, so a Kubernetes version bump also moves the nodes' AMI (and
    `up`'s preview shows the new release) instead of every node booting the creation-day AMI."""
    return aws.ssm.get_parameter_output(
        name=eks_release_parameter(cat, role, version),
        opts=pulumi.InvokeOptions(parent=opts.parent),
    ).value


class EksGpuCluster(pulumi.ComponentResource):
    def __init__(
        self, name: str, spec: ClusterSpec, stack: str, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("gpu-clusters:aws:EksGpuCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cat = catalog()
        tags = cloud_tags(spec, stack)
        labels = k8s_labels(spec, stack)

        self._control_plane(name, spec, stack, cat, tags, child)
        self._node_groups(name, spec, stack, cat, tags, labels, child)
        self._kubernetes(name, spec, stack)
        self.outputs = self._outputs(spec, stack, cat)
        self.register_outputs(self.outputs)

    def _control_plane(self, name, spec, stack, cat, tags, child) -> None:
        """VPC, IAM roles, the EKS control plane, the admin access entry, managed add-ons."""
        partition = aws.get_partition().partition
        caller = aws.get_caller_identity()
        self.vpc = EksVpc(name, spec, stack, child)
        self.iam = EksIamRoles(name, spec, stack, partition, child)
        private_ids = [s.id for s in self.vpc.private_subnets.values()]
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=f"/aws/eks/{eks_cluster_name(spec, stack)}/cluster",
            retention_in_days=CONTROL_PLANE_LOG_DAYS,
            tags=tags,
            opts=child,
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-eks",
            name=eks_cluster_name(spec, stack),
            version=kubernetes_version(spec, cat),
            role_arn=self.iam.cluster_role.arn,
            vpc_config=_vpc_config(spec, private_ids),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                bootstrap_cluster_creator_admin_permissions=False,
            ),
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=eks_support_type(cat)),
            enabled_cluster_log_types=CONTROL_PLANE_LOGS,
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*self.iam.attachments, self.log_group]
            ),
        )
        cluster_name = self.cluster.name
        # Cluster admins: kubernetes.adminPrincipalArns, else the deployer's role with its path.
        # The Helm releases later in this `up` authenticate as the deployer, so it must be one.
        admins = list(spec.kubernetes.admin_principal_arns) or [deployer_principal(caller.arn)]
        self.admins = [
            EksAdminAccess(
                f"{name}-admin" if i == 0 else f"{name}-admin-{i}", cluster_name, arn,
                partition, tags, child,
            )
            for i, arn in enumerate(admins)
        ]  # fmt: skip
        self.admin = self.admins[0]
        self.addons: list[aws.eks.Addon] = []
        version = kubernetes_version(spec, cat)
        for addon in managed_addons(spec):
            role = self.iam.pod_roles.get(addon)
            self.addons.append(
                aws.eks.Addon(
                    f"{name}-{addon}",
                    cluster_name=cluster_name,
                    addon_name=addon,
                    addon_version=addon_version(addon, version, child),
                    configuration_values=ADDON_CONFIG.get(addon),
                    resolve_conflicts_on_create="OVERWRITE",
                    resolve_conflicts_on_update="OVERWRITE",
                    pod_identity_associations=(
                        [
                            aws.eks.AddonPodIdentityAssociationArgs(
                                role_arn=role.arn, service_account=POD_ROLES[addon][1]
                            )
                        ]
                        if role is not None
                        else None
                    ),
                    tags=tags,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=self.addons[:1]),
                )
            )
        self.autoscaler = EksAutoscalerIdentity(
            f"{name}-autoscaler",
            cluster_name,
            tags,
            pulumi.ResourceOptions(parent=self, depends_on=self.addons[:1]),
        )
        self._private_ids = private_ids
        if spec.kubernetes.private_api_server:
            # The private endpoint answers only what the cluster security group lets in: the
            # VPN or peered ranges of ssh.allowedCidrs (rules_k8s.private_api_server).
            for i, cidr in enumerate(spec.ssh.allowed_cidrs):
                aws.vpc.SecurityGroupIngressRule(
                    f"{name}-api-{i}",
                    security_group_id=self.cluster.vpc_config.cluster_security_group_id,
                    cidr_ipv4=cidr,
                    ip_protocol="tcp",
                    from_port=443,
                    to_port=443,
                    description="Kubernetes API from a VPN or peered network",
                    tags=tags,
                    opts=child,
                )

    def _node_groups(self, name, spec, stack, cat, tags, labels, child) -> None:
        """The system node group, the EFA security group and one GPU node group per partition."""
        private_ids = self._private_ids
        cluster_name = self.cluster.name
        version = kubernetes_version(spec, cat)
        self.system_nodes = EksSystemNodeGroup(
            f"{name}-system",
            kubernetes_version=version,
            release_version=ami_release(cat, "systemNodes", version, child),
            instance_type=head_sku(spec),
            nodes=spec.kubernetes.system_nodes,
            cluster_name=cluster_name,
            node_role_arn=self.iam.node_role.arn,
            subnet_ids=private_ids,
            labels=labels,
            tags=tags,
            opts=child,
        )
        self.efa_sg = EfaSecurityGroup(f"{name}-efa", self.vpc.vpc.id, tags, child)
        cluster_sg = self.cluster.vpc_config.cluster_security_group_id
        self.gpu_node_groups: dict[str, EksGpuNodeGroup] = {}
        gpu_release = ami_release(cat, "gpuNodes", version, child)
        for part in spec.partitions:
            sku = cat.get(part.sku, "aws")
            if sku is None:  # the spec rules refuse unknown SKUs first
                raise LookupError(part.sku)
            self.gpu_node_groups[part.name] = EksGpuNodeGroup(
                f"{name}-{part.name}",
                part,
                sku,
                cat,
                kubernetes_version=version,
                release_version=gpu_release,
                cluster_name=cluster_name,
                node_role_arn=self.iam.node_role.arn,
                subnet=self.vpc.subnet_for(part.zones[0] if part.zones else None),
                # the cluster group keeps node <-> control plane traffic working
                security_group_ids=[cluster_sg, self.efa_sg.group.id],
                placement_group_name=f"{spec.name}-{stack}-{part.name}",
                labels=labels,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*self.addons]),
            )
        fs = shared_filesystem(spec)
        self.shared_fs = None
        if fs is not None:
            # In the default partition's subnet, so the GPU nodes reach it within their zone.
            zone = spec.default_partition.zones[0] if spec.default_partition.zones else None
            self.shared_fs = FsxLustreFileSystem(
                f"{name}-lustre",
                fs,
                vpc_id=self.vpc.vpc.id,
                subnet_id=self.vpc.subnet_for(zone).id,
                node_security_group_id=cluster_sg,
                tags=tags,
                opts=child,
            )

    def _kubernetes(self, name, spec, stack) -> None:
        """The kubeconfig, a provider on it, and the GPU add-ons once the nodes exist."""
        cluster_name = self.cluster.name
        self.kubeconfig = eks_kubeconfig(
            cluster_name,
            self.cluster.endpoint,
            self.cluster.certificate_authority.apply(lambda ca: ca.data if ca else None),
            spec.region,
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.admins),
        )
        volumes = []
        if self.shared_fs is not None:
            fsx = self.shared_fs.file_system
            volumes = shared_volume_docs(
                spec,
                stack,
                file_system_id=fsx.id,
                dns_name=fsx.dns_name,
                mount_name=fsx.mount_name,
            )
        self.k8s_addons = KubernetesGpuAddons(
            f"{name}-addons",
            spec,
            stack,
            self.provider,
            pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.system_nodes, *self.gpu_node_groups.values(), self.autoscaler],
            ),
            volumes=volumes,
        )

    def _outputs(self, spec, stack, cat) -> dict[str, Any]:
        cluster_name = self.cluster.name
        return {  # EksClusterOutputs
            out.KUBECONFIG: self.kubeconfig,  # a secret Output
            out.KUBERNETES_VERSION: kubernetes_version(spec, cat),
            out.EKS_CLUSTER_NAME: cluster_name,
            out.CLUSTER_ENDPOINT: self.cluster.endpoint,
            out.REGION: spec.region,
            out.VPC_ID: self.vpc.vpc.id,
            out.GPU_NODE_GROUPS: {
                p: {
                    "subnetId": g.node_group.subnet_ids.apply(lambda ids: ids[0] if ids else None),
                    "placementGroup": g.placement_group.name if g.placement_group else None,
                }
                for p, g in self.gpu_node_groups.items()
            },
            out.ADDON_VERSIONS: self.k8s_addons.chart_versions,
            out.NCCL_LAUNCHER: nccl_launcher(spec, stack, cat),
        }
