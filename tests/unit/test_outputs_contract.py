"""The stack-output contract (clusterctl/outputs.py): every key a command reads is produced by the
plan of every shipped stack that command accepts, with the declared type; the keys are the
contract's constants; readers cannot read a key they did not declare."""

from __future__ import annotations

import ast
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from clusterctl import outputs as out
from clusterctl.plan.program import make_plan

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("*.yaml"))
CLUSTER_OUTPUTS = {
    ("azure", "slurm"): out.SlurmClusterOutputs,
    ("aws", "kubernetes"): out.EksClusterOutputs,
    ("azure", "kubernetes"): out.AksClusterOutputs,
}
_plans: dict = {}


def plan_of(stack: str):
    if stack not in _plans:
        _plans[stack] = make_plan(stack)
    return _plans[stack]


def test_every_shipped_stack_is_checked() -> None:
    assert set(SHIPPED) >= {"azure-h100", "azure-a100", "aws-p5", "aks-h100"}


@pytest.mark.parametrize("command", sorted(out.READS))
@pytest.mark.parametrize("stack", SHIPPED)
def test_every_key_a_command_reads_is_in_the_plan_with_its_type(stack: str, command: str) -> None:
    plan = plan_of(stack)
    kind = plan.spec.scheduler
    if kind not in out.READS[command]:
        pytest.skip(f"{command} does not accept a {kind} stack")
    produced = plan.run.outputs
    assert out.kind_of(produced) == kind
    missing = [k for k in out.READS[command][kind] if k not in produced]
    assert not missing, f"`{command} -s {stack}` reads {missing}: the plan does not write them"
    for key in out.READS[command][kind]:
        problems = out.type_problems(produced[key], out.key_type(kind, key), key)
        assert not problems, f"`{command} -s {stack}`: {problems}"


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_plan_writes_the_whole_contract_of_its_kind(stack: str) -> None:
    plan = plan_of(stack)
    kind = plan.spec.scheduler
    produced = plan.run.outputs
    assert out.type_problems(produced, out.OUTPUTS[kind]) == []
    assert out.type_problems(produced, CLUSTER_OUTPUTS[plan.spec.cloud, kind]) == []
    declared = set(typing.get_type_hints(out.OUTPUTS[kind]))
    declared |= set(typing.get_type_hints(CLUSTER_OUTPUTS[plan.spec.cloud, kind]))
    assert set(produced) <= declared, "outputs the contract does not declare"
    if kind == out.KUBERNETES:
        assert out.KUBECONFIG in plan.run.secret_outputs


def _contract_types() -> list[type]:
    return [v for v in vars(out).values() if typing.is_typeddict(v)]


def _key_constants() -> set[str]:
    return {
        v
        for k, v in vars(out).items()
        if k.isupper() and isinstance(v, str) and k not in ("SLURM", "KUBERNETES", "SECRET_MASK")
    }


def test_reads_name_keys_of_the_kind_they_read() -> None:
    for command, by_kind in out.READS.items():
        for kind, keys in by_kind.items():
            fields = set(typing.get_type_hints(out.OUTPUTS[kind]))
            assert set(keys) <= fields, f"{command} ({kind}) reads undeclared {set(keys) - fields}"


def test_every_top_level_key_is_a_constant() -> None:
    top = (out.CommonOutputs, out.SlurmClusterOutputs, *CLUSTER_OUTPUTS.values())
    keys = {k for tp in top for k in typing.get_type_hints(tp)}
    keys |= {out.ALL_REDUCE_PERF}
    assert keys <= _key_constants(), keys - _key_constants()


def test_a_reader_refuses_a_key_it_did_not_declare() -> None:
    got = out.reader("validate", {out.SCHEDULER: out.SLURM, out.SSH_COMMAND: "ssh x"})
    assert got.get(out.SCHEDULER) == out.SLURM and set(got) == {out.SCHEDULER}
    with pytest.raises(out.UndeclaredRead, match="sshCommand"):
        got.get(out.SSH_COMMAND)


def _literal_reads(path: Path, keys: set[str]) -> list[str]:
    """`x["key"]` and `x.get("key")` with a contract key spelled as a string literal."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        arg = None
        if isinstance(node, ast.Subscript):
            arg = node.slice
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get":
            arg = node.args[0] if node.args else None
        if isinstance(arg, ast.Constant) and arg.value in keys:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {arg.value!r}")
    return found


def test_readers_and_writers_spell_keys_through_the_contract() -> None:
    # camelCase keys only: `name`, `sku` or `stack` are common words in unrelated code
    keys = {k for k in _key_constants() if k != k.lower()} | {"binary", "kubeconfigPath"}
    files = [*(ROOT / "clusterctl").rglob("*.py"), *(ROOT / "components").rglob("*.py")]
    skip = {"outputs.py", "mockengine.py"}  # the contract; the mock engine reads resource inputs
    # clusterctl/power runs on the scheduler and reads Azure IMDS (its own resourceGroupName),
    # never stack outputs; clusterctl/monitor there reads its own config file (drainPrefix)
    files = [f for f in files if not {"power", "monitor"} & set(f.relative_to(ROOT).parts)]
    found = [hit for f in files if f.name not in skip for hit in _literal_reads(f, keys)]
    assert found == []


def test_the_contract_is_standard_library_only() -> None:
    code = (
        "import sys, clusterctl.outputs; "
        "bad = {'pulumi', 'pydantic', 'yaml', 'rich', 'typer'} & set(sys.modules); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_hooks_early_outputs_reach_a_slurm_target() -> None:
    """The post-deploy hook validates from outputs known before the nodes exist."""
    from clusterctl.validate.targets import SlurmTarget, stack_target
    from components.azure.slurm.slurm_cluster import AzureSlurmCluster

    spec = plan_of("azure-h100").spec
    known = AzureSlurmCluster.post_deploy_validation_outputs(None, spec)  # type: ignore[arg-type]
    known[out.SCHEDULER_ADDRESS] = "10.40.0.4"
    target = stack_target("azure-h100", known)
    assert isinstance(target, SlurmTarget)
    assert (target.ssh.host, target.gpus_per_node, target.nodes) == ("10.40.0.4", 8, 2)
