"""`clusterctl plan`: the real Pulumi program under the mock engine, plus every rendered file."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clusterctl.errors import Finding
from clusterctl.plan.invokes import MOCK_INVOKES
from clusterctl.plan.mockengine import MockRun, run_program
from clusterctl.platform import scheduler_of
from clusterctl.project import PROJECT_NAME
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import Cost, cost_per_hour, idle_cost_per_hour, shared_gpu_offers
from clusterctl.spec.load import load_stack_spec
from clusterctl.spec.model import ClusterSpec, field_path


@dataclass
class Plan:
    stack: str
    spec: ClusterSpec
    run: MockRun
    cost: Cost
    findings: list[Finding]
    files: dict[str, str] = field(default_factory=dict)
    idle_cost: float | None = 0.0
    """What the cluster bills idle (spec.cost.idle_cost_per_hour); None: unknown."""

    def as_json(self) -> dict[str, Any]:
        from clusterctl.figures import tidy_floats

        return tidy_floats(
            {
                "stack": self.stack,
                "resources": [r.as_json() for r in self.run.resources],
                "outputs": {
                    k: ("[secret]" if k in self.run.secret_outputs else v)
                    for k, v in self.run.outputs.items()
                },
                "cost_per_hour_usd": self.cost.total,
                "cost_per_day_usd": self.cost.per_day,
                "idle_cost_per_hour_usd": self.idle_cost,
                # null costs above are unknown (a type without a catalog price), never 0
                "cost_unpriced": self.cost.unpriced,
                "cost_notes": {line.item: line.note for line in self.cost.lines if line.note},
                "shared_gpus": [asdict(o) for o in shared_gpu_offers(self.spec, catalog())],
                "findings": [
                    {"level": f.level, "message": f.message, "field": f.field}
                    for f in self.findings
                ],
            }
        )


def _prometheus_retention(spec: ClusterSpec, stack: str) -> Finding:
    """What the scheduler's Prometheus keeps at full size: a warning when its cap (a tenth of the
    data disk) holds fewer days than the configured retention."""
    from clusterctl.render.monitoring import RETENTION_DAYS, retention
    from clusterctl.spec.defaults import uses_files_share

    r = retention(spec, stack, catalog())
    text = (
        f"Prometheus on the scheduler: about {r.series:,} series with every GPU node up, "
        f"{r.gb_per_day:.2g} GB a day; its cap of {r.cap_gb} GB (a tenth of the data disk) "
        f"holds {f'about {r.days:.0f}' if r.days < 1000 else 'over 999'} days"
    )
    if not r.short:
        return Finding("info", f"{text}; it keeps {RETENTION_DAYS}")
    need = math.ceil(r.gb_per_day * RETENTION_DAYS * 10)
    if uses_files_share(spec):
        return Finding("warning", f"{text}, not {RETENTION_DAYS}: older metrics are deleted")
    return Finding(
        "warning",
        f"{text}, not {RETENTION_DAYS}: older metrics are deleted; set sizeGib to at least "
        f"{need} to keep {RETENTION_DAYS}",
        field_path("storage", "sizeGib"),
    )


def make_plan(stack: str, overrides: list[str] | None = None) -> Plan:
    spec, findings = load_stack_spec(stack, overrides)
    from clusterctl.render.bundle import render_bundle
    from clusterctl.render.roles import plan_slurm
    from clusterctl.render.user_data import plan_user_data
    from clusterctl.validate.hook import run_post_deploy
    from components.program import run  # imports the providers: only once a plan is asked for

    # A Slurm cluster's files and user-data are rendered once: the program and `--out` read them.
    slurm = scheduler_of(spec.scheduler).head_node
    rendered = plan_slurm(spec, stack) if slurm else None
    user_data = plan_user_data(spec, stack, rendered) if rendered else None
    hook = run_post_deploy if slurm and spec.validation.nccl.on_deploy else None
    mock_run = run_program(
        lambda: run(spec, stack, plan=rendered, user_data=user_data, post_deploy=hook),
        project=PROJECT_NAME,
        stack=stack,
        invokes=MOCK_INVOKES,
    )
    from clusterctl.render.downloads import unpinned

    loose = unpinned(catalog())
    if loose and scheduler_of(spec.scheduler).head_node:
        findings = [
            *findings,
            Finding(
                "info",
                "the nodes install these unchecked, no pin being recorded in "
                f"config/versions.yaml: {', '.join(loose)}",
            ),
        ]
    if slurm:
        from clusterctl.render.slurm_conf import block_size_findings

        findings += [*block_size_findings(spec, catalog()), _prometheus_retention(spec, stack)]
    return Plan(
        stack=stack,
        spec=spec,
        run=mock_run,
        cost=cost_per_hour(spec, catalog()),
        findings=findings,
        files=render_bundle(spec, stack, rendered, user_data),
        idle_cost=idle_cost_per_hour(spec, catalog()),
    )


def write_plan(plan: Plan, out: Path) -> list[Path]:
    """Write plan.json and every rendered file under `out`; return the paths written."""
    written = []
    for rel, text in sorted(plan.files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    path = out / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan.as_json(), indent=2, sort_keys=False, default=str) + "\n")
    written.append(path)
    return written
