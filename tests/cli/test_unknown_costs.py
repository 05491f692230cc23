"""Every cost `plan`, `up`, `status` and the cluster's metrics show is a catalog price or says it
is unknown: a type without a price never makes a total look small, and a price that is not what
the cluster pays (spot, another region's) says so."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from clusterctl.monitor.slurm_metrics import render
from clusterctl.render.monitoring import monitoring_config
from clusterctl.spec.catalog import catalog
from clusterctl.spec.cost import cost_per_hour, idle_cost_per_hour
from clusterctl.spec.load import load_stack_spec

GB200 = "azure-gb200"  # its SKU has no sourced price in config/skus.yaml


def test_a_gpu_type_without_a_price_makes_the_total_unknown(cli) -> None:
    spec, _ = load_stack_spec(GB200)
    assert catalog().require(spec.partitions[0].sku).price.usd_per_hour is None
    cost = cost_per_hour(spec, catalog())
    assert cost.total is None and cost.per_day is None
    assert cost.unpriced == ["partition gpu"]
    assert cost.priced_part > 0  # the head node and NAT are still priced
    text = cli("plan", "-s", GB200).stdout
    headline = next(line for line in text.splitlines() if "estimated cost" in line)
    assert "unknown" in headline and f"${cost.priced_part:,.2f} per hour" not in headline
    assert "partition gpu" in text.split("estimated cost", 1)[1]


def test_plan_json_and_the_cost_output_say_null_not_the_priced_part(cli) -> None:
    result = cli("plan", "-s", GB200, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["cost_per_hour_usd"] is None and doc["cost_per_day_usd"] is None
    assert doc["cost_unpriced"] == ["partition gpu"]
    assert doc["outputs"]["costPerHourUsd"] is None  # what `status` and scripts read


def test_idle_cost_is_unknown_when_it_keeps_unpriced_nodes() -> None:
    spec, _ = load_stack_spec(GB200, ["partitions[0].idleMinutes=0"])
    assert idle_cost_per_hour(spec, catalog()) is None
    spec, _ = load_stack_spec(GB200)  # minNodes 0: no GPU node is kept, the rest is priced
    assert idle_cost_per_hour(spec, catalog()) is not None


def test_a_spot_partition_says_its_on_demand_price_is_an_upper_bound(cli) -> None:
    doc = json.loads(cli("plan", "-s", "azure-h100", "--json").stdout)
    assert "partition gpu" not in doc["cost_notes"]
    result = cli("plan", "-s", "azure-h100", "--set", "partitions[0].spot=true", "--json")
    assert result.exit_code == 0, result.output
    assert "spot" in json.loads(result.stdout)["cost_notes"]["partition gpu"]
    text = cli("plan", "-s", "azure-h100", "--set", "partitions[0].spot=true").stdout
    line = next(x for x in text.splitlines() if x.strip().startswith("partition gpu:"))
    assert "spot" in line and "upper bound" in line


def test_a_region_without_a_catalog_price_names_where_the_price_is_from() -> None:
    spec, _ = load_stack_spec("azure-h100", ["region=westus3"])
    notes = {line.item: line.note for line in cost_per_hour(spec, catalog()).lines}
    assert notes["partition gpu"] == "eastus's price: the catalog has none for westus3"
    assert notes["head node"] == "eastus's price: the catalog has none for westus3"
    spec, _ = load_stack_spec("azure-h100")
    assert not any("catalog has none" in line.note for line in cost_per_hour(spec, catalog()).lines)


def test_status_of_an_unpriced_cluster_says_unknown_not_zero() -> None:
    from clusterctl.lifecycle.status import Status

    now = datetime(2026, 1, 2, tzinfo=UTC)
    status = Status(
        stack=GB200, deployed=True, cluster="gb200", cloud="azure", region="eastus",
        scheduler="slurm", groups=(), resources=3, since=datetime(2026, 1, 1, tzinfo=UTC),
        last_update=None, cost_per_hour=None, now=now, outputs={},
    )  # fmt: skip
    doc = status.as_json()
    assert doc["costPerHourUsd"] is None and doc["spentUsd"] is None


def test_cluster_metrics_leave_out_the_spend_of_an_unpriced_partition() -> None:
    spec, _ = load_stack_spec(GB200)
    config = json.loads(monitoring_config(spec, catalog()))
    assert "gpu" not in config["pricesUsdPerHour"]
    text = render([], [], [], config["pricesUsdPerHour"], "nhc", 0.0)
    assert 'gpucl_cost_usd_per_hour{partition="gpu"}' not in text
