"""Run the Pulumi program in-process under Pulumi's mock engine and record every resource.

This is what makes `clusterctl plan` offline: no CLI, no provider binaries, no credentials,
and yet the very code `pulumi up` runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pmocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from clusterctl.spec.lustre import AMLFS_MGS_PLACEHOLDER

SECRET = "[secret]"


@dataclass
class RecordedResource:
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    secret_paths: list[str] = field(default_factory=list)
    protect: bool = False
    urn: str = ""
    parent_urn: str | None = None
    after_create_hooks: list[str] = field(default_factory=list)
    ignore_changes: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    depends_on: list[str] = field(default_factory=list)
    """Names of the resources the engine waits for before this one (its dependencies)."""

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "inputs": self.inputs,
        }
        if self.protect:  # kept by `pulumi destroy`
            doc["protect"] = True
        if self.ignore_changes:  # the engine leaves these inputs as they were created
            doc["ignoreChanges"] = list(self.ignore_changes)
        if self.replace_on_changes:  # a change here replaces the resource
            doc["replaceOnChanges"] = list(self.replace_on_changes)
        if self.delete_before_replace:  # a replacement deletes the old one first
            doc["deleteBeforeReplace"] = True
        if self.after_create_hooks:  # run by the engine after the resource is created
            doc["hooks"] = {"afterCreate": list(self.after_create_hooks)}
        return doc


@dataclass
class MockRun:
    resources: list[RecordedResource]
    outputs: dict[str, Any]
    secret_outputs: list[str]

    def by_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]


def _fake_id(type_: str, name: str) -> str:
    return hashlib.sha1(f"{type_}/{name}".encode()).hexdigest()[:16]


MOCK_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
# azure-native's module -> the ARM resource provider namespace its ids carry.
_ARM_NAMESPACES = {
    "authorization": "Microsoft.Authorization",
    "compute": "Microsoft.Compute",
    "containerservice": "Microsoft.ContainerService",
    "dataprotection": "Microsoft.DataProtection",
    "keyvault": "Microsoft.KeyVault",
    "managedidentity": "Microsoft.ManagedIdentity",
    "network": "Microsoft.Network",
    "storage": "Microsoft.Storage",
}


# The input that names a resource where it is not `<kind>Name` (pulumi-azure-native's args).
_NAME_INPUTS = {
    "VirtualMachineScaleSet": "vmScaleSetName",
    "VirtualMachine": "vmName",
    "ManagedCluster": "resourceName",
}
# Child resources: their id runs through the parent's (`<parent type>/<parent name>/<type>`).
_PARENTS = {"Subnet": ("virtualNetworks", "virtualNetworkName"),
            "AgentPool": ("managedClusters", "resourceName"),
            "BackupPolicy": ("backupVaults", "vaultName"),
            "BackupInstance": ("backupVaults", "vaultName")}  # fmt: skip


def azure_name(type_: str, name: str, inputs: dict[str, Any]) -> str:
    """The name Azure gives the resource: the input that names it where the program sets one
    (a ResourceGroup's resourceGroupName, a scale set's vmScaleSetName), else the logical name
    (which Pulumi's auto-naming then suffixes)."""
    kind = type_.split(":")[-1]
    explicit = inputs.get(_NAME_INPUTS.get(kind, kind[:1].lower() + kind[1:] + "Name"))
    return explicit if isinstance(explicit, str) and explicit else name


def _arm_id(type_: str, name: str, inputs: dict[str, Any]) -> str:
    """An ARM id of the real form (/subscriptions/.../providers/Microsoft.X/things/name), so the
    scopes `plan` prints read as they will in Azure."""
    _, module, kind = type_.split(":")
    if kind == "ResourceGroup":
        return f"/subscriptions/{MOCK_SUBSCRIPTION}/resourceGroups/{name}"
    rg = inputs.get("resourceGroupName", f"rg-{name}")
    namespace = _ARM_NAMESPACES.get(module, f"Microsoft.{module.capitalize()}")
    plural = kind[:1].lower() + kind[1:]
    plural = plural[:-1] + "ies" if plural.endswith("y") else plural + "s"
    if kind in _PARENTS and isinstance(inputs.get(_PARENTS[kind][1]), str):
        parent_type, key = _PARENTS[kind]
        plural = f"{parent_type}/{inputs[key]}/{plural}"
    return (
        f"/subscriptions/{MOCK_SUBSCRIPTION}/resourceGroups/{rg}/providers/{namespace}/"
        f"{plural}/{name}"
    )


def plausible_state(type_: str, name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """What a provider would return: the inputs, plus the outputs later resources read."""
    state = dict(inputs)
    rid = _fake_id(type_, name)
    if type_.startswith("azure-native:"):
        rid = _azure_state(type_, name, inputs, state)
    elif type_.startswith("aws:"):
        rid = _aws_state(type_, name, rid, state)
    else:
        _generated_state(type_, inputs, state)
    state.setdefault("id", rid)
    return rid, state


def _azure_state(type_: str, name: str, inputs: dict[str, Any], state: dict[str, Any]) -> str:
    """ARM's answer: the resource's real name and ARM id, identities as maps, addresses."""
    kind = type_.split(":")[-1]
    real = azure_name(type_, name, inputs)
    state.setdefault("name", real)
    identity = state.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
        # Input is a list of ids, the provider answers a map of id -> details.
        ids = identity["userAssignedIdentities"]
        state["identity"] = {**identity, "userAssignedIdentities": {i: {} for i in ids}}
    if isinstance(identity, dict) and identity.get("type") == "SystemAssigned":
        # Azure answers a system-assigned identity's principal (role assignments name it).
        state["identity"] = {"principalId": "33333333-3333-3333-3333-333333333333", **identity}
    if kind == "StorageAccount" and inputs.get("accountName"):
        state["name"] = inputs["accountName"]  # the provider answers the name it was given
    if kind == "PublicIPAddress":
        state.setdefault("ipAddress", "198.51.100.10")
    if kind == "AmlFilesystem":  # the address the nodes mount (clientInfo.mgsAddress)
        mgs = AMLFS_MGS_PLACEHOLDER
        state.setdefault("clientInfo", {"mgsAddress": mgs, "mountCommand": f"{mgs}@tcp:/lustrefs"})
    if kind == "UserAssignedIdentity":
        state.setdefault("principalId", "11111111-1111-1111-1111-111111111111")
        state.setdefault("clientId", "22222222-2222-2222-2222-222222222222")
    if kind == "NetworkInterface":
        configs = [dict(c) for c in inputs.get("ipConfigurations") or [{}]]
        configs[0].setdefault("privateIPAddress", "10.40.0.4")
        state["ipConfigurations"] = configs
    return _arm_id(type_, real, inputs)


def _aws_state(type_: str, name: str, rid: str, state: dict[str, Any]) -> str:
    """AWS's answer: an ARN; the EKS cluster's endpoint and CA, a node group's ASG."""
    rid = f"{type_.split(':')[-1].lower()}-{rid}"
    state.setdefault("arn", f"arn:aws:mock:::{name}")
    if type_ == "aws:eks/cluster:Cluster":  # what the kubeconfig output is built from
        state.setdefault("endpoint", f"https://{rid[-16:].upper()}.gr7.mock.eks.amazonaws.com")
        state.setdefault("certificateAuthority", {"data": "bW9jay1jYQ=="})
    if type_ == "aws:eks/nodeGroup:NodeGroup":  # its Auto Scaling group, which gets tags
        state.setdefault("resources", [{"autoscalingGroups": [{"name": f"eks-{name}-asg"}]}])
    return rid


def _generated_state(type_: str, inputs: dict[str, Any], state: dict[str, Any]) -> None:
    """The random and tls providers' generated values, fixed."""
    if type_ == "random:index/randomBytes:RandomBytes":
        state["base64"] = "bW9jay1tdW5nZS1rZXk=" * 50
        state["hex"] = "00" * int(inputs.get("length", 32))
    elif type_ == "random:index/randomString:RandomString":
        length = int(inputs.get("length", 16))
        state["result"] = ("mock" + "0" * length)[:length]
    elif type_ == "random:index/randomPassword:RandomPassword":
        state["result"] = "mock-password-0000"
    elif type_ == "tls:index/privateKey:PrivateKey":
        state["publicKeyOpenssh"] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAImockkey gpu-clusters"
        state["privateKeyOpenssh"] = "-----BEGIN OPENSSH PRIVATE KEY-----\nmock\n"


class PlanMocks(pulumi.runtime.Mocks):
    def __init__(self, invokes: dict[str, Callable[[dict], dict]] | None = None):
        self.invokes = invokes or {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if not args.custom:
            return (f"{args.name}_id", {})
        return plausible_state(args.typ, args.name, args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        handler = self.invokes.get(args.token)
        if handler is None:
            raise RuntimeError(f"plan's mock engine has no answer for invoke '{args.token}'")
        return handler(args.args)


class RecordingMonitor(pmocks.MockMonitor):
    """MockMonitor that also remembers each resource's parent, inputs and secrets."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.recorded: list[RecordedResource] = []
        self._names: dict[str, str] = {}
        self.thread_loops: set[asyncio.AbstractEventLoop] = set()
        self._lock = threading.Lock()

    def _note_thread_loop(self) -> None:
        # The SDK's mock monitor runs in executor threads and gives each an event loop it
        # never closes; run_program closes them once the program is done.
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # this call opened none
            return
        with self._lock:
            self.thread_loops.add(loop)

    def Invoke(self, request):
        try:
            return super().Invoke(request)
        finally:
            self._note_thread_loop()

    def ReadResource(self, request):
        try:
            return super().ReadResource(request)
        finally:
            self._note_thread_loop()

    def RegisterResource(self, request):
        try:
            response = super().RegisterResource(request)
        finally:
            self._note_thread_loop()
        if request.type != "pulumi:pulumi:Stack":
            # Walk the wire form ourselves: the SDK's deserializer pushes secretness up to the
            # enclosing object, which would hide every sibling of a secret field.
            raw = json_format.MessageToDict(request.object)
            secrets: list[str] = []
            inputs = _strip_secrets(raw, "", secrets)
            self._names[response.urn] = request.name
            self.recorded.append(
                RecordedResource(
                    type=request.type,
                    name=request.name,
                    parent=self._names.get(request.parent),
                    custom=bool(request.custom),
                    inputs=inputs,
                    secret_paths=secrets,
                    protect=bool(getattr(request, "protect", False)),
                    ignore_changes=list(getattr(request, "ignoreChanges", []) or []),
                    replace_on_changes=list(request.replaceOnChanges),
                    delete_before_replace=bool(request.deleteBeforeReplace),
                    depends_on=[self._names.get(u, u) for u in request.dependencies],
                    urn=response.urn,
                    parent_urn=request.parent or None,
                    after_create_hooks=list(request.hooks.after_create)
                    if request.HasField("hooks")
                    else [],
                )
            )
        return response


def _strip_secrets(value: Any, path: str, found: list[str]) -> Any:
    if isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig:
        found.append(path or ".")
        return SECRET
    if isinstance(value, dict) and rpc._special_sig_key in value:
        return {k: v for k, v in value.items() if k != rpc._special_sig_key}
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf Struct numbers are doubles; 8 GPUs are not 8.0
    if isinstance(value, dict):
        # Keys sorted: the wire form is a protobuf map, whose order changes from run to run.
        return {
            k: _strip_secrets(v, f"{path}.{k}" if path else k, found)
            for k, v in sorted(value.items())
            if not (isinstance(k, str) and k.startswith("__"))
        }
    if isinstance(value, list):
        return [_strip_secrets(v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


def run_program(
    program: Callable[[], dict[str, Any]],
    *,
    project: str,
    stack: str,
    invokes: dict[str, Callable[[dict], dict]] | None = None,
) -> MockRun:
    """Run `program` (which returns the stack outputs) under mocks and wait for everything."""
    # A loop of our own, closed before we return: Pulumi's default one is never closed, and its
    # finaliser can run at interpreter exit after its self-pipe is gone (a traceback on stderr).
    # The same for the loops the SDK's mock monitor opens in its worker threads.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    monitor = RecordingMonitor(PlanMocks(invokes))
    try:
        return _run_in_loop(program, monitor, project=project, stack=stack)
    finally:
        _close_loops(loop, monitor.thread_loops)


def _close_loops(
    loop: asyncio.AbstractEventLoop, thread_loops: set[asyncio.AbstractEventLoop]
) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())  # the monitor's worker threads
    for idle in thread_loops - {loop}:
        idle.close()
    loop.close()
    asyncio.set_event_loop(None)


def _run_in_loop(
    program: Callable[[], dict[str, Any]],
    monitor: RecordingMonitor,
    *,
    project: str,
    stack: str,
) -> MockRun:
    settings.reset_options(project=project, stack=stack, preview=False)
    pmocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=False, monitor=monitor)
    resolved: dict[str, Any] = {}
    secret_outputs: list[str] = []

    def body() -> None:
        outputs = program()
        for key, value in outputs.items():
            out = pulumi.Output.from_input(value)
            resolved[key] = _sync_await(out.future())
            if _sync_await(out.is_secret()):
                secret_outputs.append(key)

    _sync_await(run_pulumi_func(body))
    return MockRun(in_tree_order(monitor.recorded), resolved, secret_outputs)


def in_tree_order(resources: list[RecordedResource]) -> list[RecordedResource]:
    """Parents before their children, siblings by name then type: the same order on every run.

    Registration order is not stable: components register their children as their inputs
    resolve, and which resolves first varies from run to run.
    """
    children: dict[str | None, list[RecordedResource]] = {}
    urns = {r.urn for r in resources}
    for res in resources:
        parent = res.parent_urn if res.parent_urn in urns else None
        children.setdefault(parent, []).append(res)
    ordered: list[RecordedResource] = []
    stack = sorted(children.get(None, []), key=_sibling_key, reverse=True)
    while stack:
        res = stack.pop()
        ordered.append(res)
        stack.extend(sorted(children.get(res.urn, []), key=_sibling_key, reverse=True))
    return ordered


def _sibling_key(res: RecordedResource) -> tuple[str, str, str]:
    return (res.name, res.type, res.urn)
