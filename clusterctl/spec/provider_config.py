"""The stack file's provider settings against the cluster's own: where `pulumi up` builds is the
provider's region, so it must be the cluster's `region`, and on AWS it must be set at all (the
program uses the default AWS provider, which otherwise takes the region from the environment)."""

from __future__ import annotations

from typing import Any

from clusterctl.clouds import all_clouds
from clusterctl.errors import Finding
from clusterctl.spec.model import CONFIG_KEY, ClusterSpec


def provider_findings(config: dict[str, Any], spec: ClusterSpec) -> list[Finding]:
    """One error per provider setting that contradicts the cluster, or that is missing.

    Compared with the cluster as the stack file writes it: a `plan --set region=...` what-if is
    not a contradiction in the file."""
    given = config.get(CONFIG_KEY)
    raw: dict[str, Any] = given if isinstance(given, dict) else {}
    planned = spec
    spec = spec.model_copy(
        update={k: raw[k] for k in ("cloud", "region") if isinstance(raw.get(k), str)}
    )
    found: list[Finding] = []
    region_field = f"{CONFIG_KEY}.region"
    for each in all_clouds():
        cloud, key, required = each.name, each.region_key, each.region_key_required
        value = config.get(key)
        if cloud != spec.cloud:
            if value is not None:
                found.append(
                    Finding(
                        "error",
                        f"is a {cloud} setting but {CONFIG_KEY}.cloud is {spec.cloud}: remove it",
                        key,
                    )
                )
            continue
        if value is None:
            if required:
                found.append(
                    Finding(
                        "error",
                        f"is not set, so `pulumi up` would build wherever the environment's AWS "
                        f"region points; add `{key}: {spec.region}` next to {CONFIG_KEY}",
                        key,
                    )
                )
            continue
        if str(value).strip().lower().replace(" ", "") != spec.region.lower().replace(" ", ""):
            found.append(
                Finding(
                    "error",
                    f"{value} contradicts {region_field} {spec.region} (the provider's region "
                    "is where `pulumi up` builds); set both to the same region",
                    key,
                )
            )
        elif planned.cloud == cloud and planned.region != spec.region:
            # A `--set region=` what-if: the file itself is consistent, but taking the what-if
            # into the file needs this key changed too, which `plan` must say, not skip.
            found.append(
                Finding(
                    "warning",
                    f"{value}: this plan's region is {planned.region} (--set), but the file's "
                    f"provider region stays {value}; set both to {planned.region} in the file "
                    "before `pulumi up`",
                    key,
                )
            )
    return found
