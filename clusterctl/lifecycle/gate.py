"""The Pulumi program's gate: on a cloud where `clusterctl up` asks the cloud first (the size
offered in the region, vCPU quota, the power role's permission: lifecycle/capacity*.py and
role_permission.py), a bare `pulumi up` would skip all of that and fail half-way through the
build, or bill VMs that cannot start. So the program runs only under `clusterctl up`, which sets
PREFLIGHT_ENV to the stack after its checks passed, or when SKIP_ENV says why the checks are
skipped. Standard library and clusterctl.platform only: `__main__.py` calls it first."""

from __future__ import annotations

from collections.abc import Mapping

from clusterctl.platform import cloud_of

PREFLIGHT_ENV = "GPUCL_PREFLIGHT_PASSED"
"""Set by `clusterctl up` for the Pulumi CLI it drives: the stack whose preflight passed."""
SKIP_ENV = "GPUCL_SKIP_PREFLIGHT"
"""Set by a user who runs `pulumi up` by hand: why the preflight is skipped (free text)."""


def bare_run_refusal(cloud: str, stack: str, environ: Mapping[str, str]) -> str | None:
    """Why the program must not run now (one line), or None."""
    if not cloud_of(cloud).quota_preflight:
        return None  # nothing is checked before `up` on this cloud: a bare run skips nothing
    if environ.get(PREFLIGHT_ENV) == stack:
        return None
    if environ.get(SKIP_ENV, "").strip():
        return None
    return (
        f"stack {stack}: run `clusterctl up -s {stack}`, which checks the VM sizes are offered "
        "in the region, the vCPU quota and the role permissions before it builds anything; a "
        f"bare `pulumi up` skips those checks. To skip them anyway, set {SKIP_ENV} to the "
        f"reason (e.g. {SKIP_ENV}='quota checked in the portal')"
    )


def skipped_reason(environ: Mapping[str, str]) -> str | None:
    """The reason a user gave for skipping the preflight, for the program's log."""
    reason = environ.get(SKIP_ENV, "").strip()
    return reason or None
