"""Every `clusterctl` command the README or a page of the docs site (docs/**/*.md) shows is run by
a test: documentation that lies is a bug.

Offline commands run here, as written (placeholders like DIR filled in), from the checkout, which
is a project. Commands that need root, a sandbox, a cloud or the Pulumi CLI name the test that runs
them; this file checks that such a test exists. A documented command matching no rule fails the
test.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import docs_pages

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_LOG = ROOT / "tests/data/nccl/nccl_tests_issue309_h100_2node.txt"

# (command prefix regex, the test that runs it). Checked to exist by test_pointers_are_real.
ELSEWHERE: list[tuple[str, str]] = [
    (
        r"sandbox fault \S+ start-fails\b",
        "tests/e2e/vm/test_vm_power.py::"
        "test_a_node_that_cannot_start_is_down_with_the_cause_and_its_job_runs_elsewhere",
    ),
    (
        r"sandbox fault \S+ preempt\b",
        "tests/e2e/vm/test_vm_power.py::test_a_spot_eviction_drains_requeues_and_deallocates",
    ),
    (
        r"sandbox fault \S+ slow-gpu\b",
        "tests/e2e/vm/test_vm_validate.py::"
        "test_train_runs_ddp_across_nodes_then_names_a_slow_node_against_the_kept_floor",
    ),
    (
        r"sandbox fault \S+ (drop-hca|no-gdr)\b",
        "tests/e2e/vm/test_vm_validate.py::"
        "test_one_node_short_of_its_fabric_fails_validate_naming_it",
    ),
    (
        r"sandbox (up -s|exec|reboot|fault|down)\b",
        "tests/e2e/vm/test_vm_cli.py::test_vm_cli_up_exec_down",
    ),
    (
        r"validate --nccl --sandbox\b",
        "tests/e2e/vm/test_vm_validate.py::test_healthy_vm_sandbox_passes",
    ),
    (
        # Kubernetes stacks and clusters: every such documented line is run, as written, against a
        # stand-in kubectl and a deployed stack's outputs
        r"validate --nccl (-s (aws-p5|aks-h100)\b|--kubeconfig\b)",
        "tests/cli/test_validate_kubernetes.py::test_readme_kubernetes_validate_command_runs",
    ),
    (
        r"validate --nccl -s \S+$",
        "tests/validate/test_slurm.py::test_stack_outputs_make_a_slurm_target",
    ),
    (r"validate --nccl --host\b", "tests/validate/test_slurm.py::test_submit_wait_collect"),
    (
        r"validate --train --sandbox\b",
        "tests/e2e/vm/test_vm_validate.py::"
        "test_train_runs_ddp_across_nodes_then_names_a_slow_node_against_the_kept_floor",
    ),
    (
        r"validate --train --kubeconfig\b",
        "tests/validate/test_train_k8s.py::test_validate_train_kubeconfig_passes_on_a_healthy_cluster",
    ),
    (
        r"validate --train (-s azure-h100$|--host\b)",
        "tests/validate/test_train.py::"
        "test_train_slurm_runs_the_one_node_reference_then_all_nodes_and_judges_scaling",
    ),
    (
        r"validate --nccl -s \S+ --resume\b",
        "tests/e2e/vm/test_vm_validate.py::"
        "test_slow_link_is_found_drained_kept_by_the_health_check_and_resumed",
    ),
    (
        r"up -s\b",
        "tests/lifecycle/test_up_status.py::test_up_runs_pulumi_up_through_the_automation_api",
    ),
    (
        r"status -s\b",
        "tests/lifecycle/test_up_status.py::test_status_reports_nodes_since_and_money_spent",
    ),
    (
        r"down -s \S+ --include-storage",
        "tests/lifecycle/test_down.py::test_include_storage_unprotects_then_destroys_everything",
    ),
    (
        r"down -s \S+ --yes --json",
        "tests/lifecycle/test_down.py::test_down_json_is_one_document_with_what_went_and_what_was_kept",
    ),
    (r"down -s\b", "tests/lifecycle/test_down.py::test_yes_keeps_storage_and_proves_the_rest_gone"),
    (
        r"node replace --sandbox\b",
        "tests/e2e/vm/test_vm_power.py::"
        "test_node_replace_returns_the_node_under_its_name_on_a_fresh_os_disk",
    ),
    (
        r"users (add|remove|sync)\b",
        "tests/e2e/vm/test_vm_team.py::"
        "test_users_add_and_remove_on_the_running_cluster_without_a_reboot",
    ),
    (
        # the shipped stack has kueue: false, so the documented line is refused there in one line
        r"notebook -s aks-h100$",
        "tests/cli/test_notebook_refuses_bad_input.py::test_bad_input_is_one_line_and_exit_2",
    ),
    (
        r"notebook -s azure-team\b",
        "tests/cli/test_notebook_refuses_bad_input.py::"
        "test_the_documented_notebook_commands_reach_the_login_node_as_the_user",
    ),
    (
        # writes the project's selection: run against a project of the test's own, not the checkout
        r"stack (select|unselect|show)\b",
        "tests/cli/test_selected_stack_and_global_flags.py::"
        "test_a_selected_stack_is_used_and_s_and_the_variable_win_over_it",
    ),
    (
        r"node replace -s\b",
        "tests/nodes/test_node_replace.py::"
        "test_replace_drains_reimages_waits_and_returns_after_checks_pass",
    ),
]
# Commands run right here (after placeholder substitution), with the exit code they must give.
RUN_HERE = [
    r"sandbox up --explain",
    r"plan\b",
    r"catalog\b",
    r"images\b",
    r"stacks\b",
    r"schema\b",
    r"init\b",
    r"validate --nccl --from-log\b",
    r"validate --train --from-log\b",
    r"users list\b",
    r"validate history\b",
    r"--",
]

# Sample logs of failing runs: a documented command judging one must give the verdict's exit 1.
FAILING_SAMPLES = ("derived_azure_socket_fallback.txt", "straggler-2-node.out")

_INLINE = re.compile(r"`((?:sudo )?(?:\.venv/bin/)?clusterctl [^`]+)`")


def readme_commands() -> list[str]:
    """Every clusterctl command in a code block or inline code span of the README or a docs page,
    without sudo/venv/comments."""
    found: list[str] = []
    text = docs_pages.text()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.splitlines():
            for part in re.split(r"&&|;|\|\|", line.split(" #", 1)[0]):
                found.append(part)
    found += _INLINE.findall(re.sub(r"```.*?```", "", text, flags=re.S))
    out = []
    for cmd in found:
        cmd = re.sub(r"^\s*(sudo\s+)?(\.venv/bin/)?", "", cmd).strip()
        if cmd.startswith("clusterctl ") and not cmd.startswith("clusterctl STACK"):
            out.append(" ".join(cmd.split()))
    return sorted(set(out))


def _is_mention(cmd: str) -> bool:
    """`clusterctl up / status / down` or `clusterctl validate --nccl` in prose: names only, or
    the start of a fuller command shown elsewhere in the documentation."""
    words = cmd.split()[1:]
    if not any(w.startswith("-") for w in words) or (len(words) == 2 and words[1][0] == "-"):
        return True  # names only, or a subcommand and one bare option (`validate -s`)
    return any(c != cmd and c.startswith(cmd + " ") for c in readme_commands())


def _rule(cmd: str) -> tuple[str, str | None]:
    rest = cmd.removeprefix("clusterctl ")
    for pattern, test in ELSEWHERE:
        if re.match(pattern, rest):
            return "elsewhere", test
    if _is_mention(cmd):
        return "here", None
    if any(re.match(p, rest) for p in RUN_HERE):
        return "here", None
    return "none", None


def test_the_readme_shows_commands() -> None:
    assert len(readme_commands()) >= 10


@pytest.mark.parametrize("cmd", readme_commands())
def test_every_readme_command_has_a_rule(cmd: str) -> None:
    kind, _ = _rule(cmd)
    assert kind != "none", f"documented command with no test: {cmd!r}; add it to this file"


def _test_exists(node: str) -> bool:
    path, name = node.split("::")
    tree = ast.parse((ROOT / path).read_text())
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))


@pytest.mark.parametrize("node", sorted({t for _, t in ELSEWHERE}))
def test_pointers_are_real(node: str) -> None:
    assert _test_exists(node), f"{node} does not exist"


def _fill(cmd: str, tmp: Path) -> list[str]:
    if _is_mention(cmd):  # each named command exists and answers --help
        names = [w for w in cmd.split()[1:] if w != "/" and not w.startswith("-")]
        return [*names[:1], "--help"] if len(names) == 1 else ["--help"]
    args = shlex.split(cmd)[1:]
    subs = {
        "DIR": str(tmp / ("proj" if args[:1] == ["init"] else "out")),
        "NAME": "azure-h100",
        "STACK": "azure-h100",
        "all_reduce.txt": str(SAMPLE_LOG),
        "plan-out": str(tmp / "plan-out"),  # never into the checkout
    }
    return [str(tmp / a) if a.startswith("out/") else subs.get(a, a) for a in args]


@pytest.mark.parametrize("cmd", [c for c in readme_commands() if _rule(c)[0] == "here"])
def test_offline_readme_command_runs(cmd: str, tmp_path: Path) -> None:
    args = _fill(cmd, tmp_path)
    stdin = None
    if "<" in args:  # `... --from-log - < FILE`: the file on stdin, as a shell gives it
        at = args.index("<")
        stdin, args = Path(args[at + 1]).read_text(), args[:at] + args[at + 2 :]
    proc = subprocess.run(
        [sys.executable, "-m", "clusterctl", *args],
        cwd=tmp_path if args[:1] == ["init"] else ROOT,
        input=stdin, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    judged = not _is_mention(cmd)  # a mention runs `--help`
    want = 1 if judged and any(sample in cmd for sample in FAILING_SAMPLES) else 0
    assert proc.returncode == want, f"{cmd}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr
    if "--report" in args:
        assert Path(args[args.index("--report") + 1]).stat().st_size > 0
