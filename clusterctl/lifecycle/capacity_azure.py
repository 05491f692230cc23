"""Azure's answers for capacity.py: Resource SKUs (GET .../providers/Microsoft.Compute/skus,
filtered to the region) and Usage (GET .../locations/{region}/usages) through azure-mgmt-compute,
with the signed-in Azure CLI or ARM_*/AZURE_* credentials (DefaultAzureCredential)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from typing import Any

from clusterctl.lifecycle.capacity import CapacityUnavailable

SUBSCRIPTION_ENV = ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")


def subscription() -> str:
    """The subscription `pulumi up` uses: ARM_SUBSCRIPTION_ID (or AZURE_...), else the CLI's."""
    for name in SUBSCRIPTION_ENV:
        if os.environ.get(name):
            return os.environ[name]
    az = shutil.which("az")
    if az is None:
        raise CapacityUnavailable("no ARM_SUBSCRIPTION_ID and no Azure CLI to read it from")
    try:
        proc = subprocess.run(
            [az, "account", "show", "-o", "json"], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        raise CapacityUnavailable("`az account show` did not answer within 60 s") from None
    if proc.returncode != 0:
        raise CapacityUnavailable(f"`az account show` failed: {proc.stderr.strip()[:200]}")
    return json.loads(proc.stdout)["id"]


class AzureCapacity:
    def __init__(self, client: Any | None = None):
        self._client = client

    def client(self) -> Any:
        if self._client is None:
            try:
                from azure.identity import DefaultAzureCredential
                from azure.mgmt.compute import ComputeManagementClient
            except ImportError:
                raise CapacityUnavailable(
                    "the Azure SDK is not installed (pip install 'gpu-clusters[azure]')"
                ) from None
            self._client = ComputeManagementClient(DefaultAzureCredential(), subscription())
        return self._client

    def fetch(self, region: str) -> tuple[list[dict], list[dict]]:
        """(ResourceSku dicts for the region, Usage dicts for the region) with the REST API's
        field names (azure-mgmt-compute 39's models give them from as_dict())."""
        try:
            client = self.client()
            skus = [
                s.as_dict() for s in client.resource_skus.list(filter=f"location eq '{region}'")
            ]
            usages = [u.as_dict() for u in client.usage.list(region)]
        except CapacityUnavailable:
            raise
        except Exception as exc:  # credentials, network, authorization: all say "not checked"
            first = (str(exc).splitlines() or [""])[0][:200]
            raise CapacityUnavailable(f"{type(exc).__name__}: {first}") from exc
        return skus, usages

    def permissions(self) -> tuple[str, list[dict]]:
        """(subscription, the signed-in identity's Permission list on it): ARM's
        Microsoft.Authorization/permissions, api-version 2022-04-01."""
        try:
            from azure.identity import DefaultAzureCredential
        except ImportError:
            raise CapacityUnavailable(
                "the Azure SDK is not installed (pip install 'gpu-clusters[azure]')"
            ) from None
        sub = subscription()
        url = (
            f"https://management.azure.com/subscriptions/{sub}/providers/"
            "Microsoft.Authorization/permissions?api-version=2022-04-01"
        )
        try:
            token = DefaultAzureCredential().get_token("https://management.azure.com/.default")
            found: list[dict] = []
            while url:
                req = urllib.request.Request(
                    url, headers={"Authorization": f"Bearer {token.token}"}
                )
                with urllib.request.urlopen(req, timeout=60) as resp:
                    doc = json.load(resp)
                found += doc.get("value") or []
                url = doc.get("nextLink")
        except Exception as exc:  # credentials, network: "not checked", as for capacity
            first = (str(exc).splitlines() or [""])[0][:200]
            raise CapacityUnavailable(f"{type(exc).__name__}: {first}") from exc
        return sub, found
