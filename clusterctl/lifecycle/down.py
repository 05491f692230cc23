"""`clusterctl down`: refresh, destroy (keeping protected storage unless asked), then prove it.

Storage is protected by the program (`protect=keepOnDestroy` on the disk tagged
gpu-clusters:role=storage), so a plain `pulumi destroy` refuses to delete it too. To keep it,
destroy runs with --exclude-protected; to drop it (--include-storage), its protection is lifted in
the state first with `pulumi state unprotect`, which needs no program run and no provider login
and leaves the stack file alone (the next `up` protects a new disk again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console

from clusterctl.lifecycle.errors import OperationFailed, error_text, failure_lines
from clusterctl.lifecycle.progress import live
from clusterctl.lifecycle.retry import Backoff, GaveUp
from clusterctl.lifecycle.stack_export import (
    StateResource,
    cloud_resources,
    kept_by_protection,
    resources_of,
    storage_to_unprotect,
)


@dataclass(frozen=True)
class DownPlan:
    destroy: tuple[StateResource, ...]
    keep: tuple[StateResource, ...]
    unprotect: tuple[StateResource, ...]

    @property
    def exclude_protected(self) -> bool:
        return bool(self.keep)


def plan_down(resources: list[StateResource], include_storage: bool) -> DownPlan:
    """Which cloud resources go, which stay (protection and what it needs), what to unprotect."""
    unprotect = storage_to_unprotect(resources) if include_storage else []
    lifted = {r.urn for r in unprotect}
    after = [replace(r, protect=False) if r.urn in lifted else r for r in resources]
    kept = {r.urn for r in kept_by_protection(after)}
    live_ = cloud_resources(resources)
    return DownPlan(
        destroy=tuple(r for r in live_ if r.urn not in kept),
        keep=tuple(r for r in live_ if r.urn in kept),
        unprotect=tuple(unprotect),
    )


def export(stack: Any) -> list[StateResource]:
    return resources_of(stack.export_stack().deployment)


def refresh(stack: Any, console: Console) -> None:
    from pulumi.automation import CommandError

    with live(console, f"pulumi refresh -s {stack.name}") as (log, on_event):
        try:
            stack.refresh(on_event=on_event, color="never")
        except CommandError as exc:
            raise OperationFailed("refresh", failure_lines(exc, log.errors)) from None


def unprotect(stack: Any, urns: list[str]) -> None:
    """`pulumi state unprotect --yes --stack S -- URN...` through the SDK's CLI wrapper."""
    from pulumi.automation import CommandError

    ws = stack.workspace
    env = {**({"PULUMI_HOME": ws.pulumi_home} if ws.pulumi_home else {}), **ws.env_vars}
    try:
        ws.cli_api.state_unprotect(*urns, stack=stack.name, cwd=ws.work_dir, additional_env=env)
    except CommandError as exc:
        raise OperationFailed("state unprotect", failure_lines(exc, [])) from None


def destroy(
    stack: Any,
    console: Console,
    backoff: Backoff,
    exclude_protected: bool,
    on_retry: Callable[[str, float, int], None],
) -> int:
    """Destroy, retrying the known transient dependency failures; return the attempts used."""
    from pulumi.automation import CommandError

    attempts = 0
    diagnostics: list[str] = []

    def attempt() -> None:
        nonlocal attempts, diagnostics
        attempts += 1
        title = f"pulumi destroy -s {stack.name}" + (
            f" (attempt {attempts})" if attempts > 1 else ""
        )
        with live(console, title) as (log, on_event):
            diagnostics = log.errors
            stack.destroy(
                on_event=on_event, color="never", exclude_protected=exclude_protected or None
            )

    try:
        backoff.run(
            attempt,
            lambda exc: error_text(exc, diagnostics),
            on_retry=on_retry,
            retry_on=(CommandError,),
        )
    except GaveUp as exc:
        lines = failure_lines(exc.last, diagnostics)
        raise OperationFailed(
            "destroy", [*lines, f"still failing with {exc.cause} after {exc.attempts} attempts"]
        ) from None
    except CommandError as exc:
        raise OperationFailed("destroy", failure_lines(exc, diagnostics)) from None
    return attempts


def leftovers(after: list[StateResource], plan: DownPlan) -> list[StateResource]:
    """Cloud resources still in the stack that the plan did not mean to keep."""
    kept = {r.urn for r in plan.keep}
    return [r for r in cloud_resources(after) if r.urn not in kept]
