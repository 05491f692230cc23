from __future__ import annotations

import pytest

from clusterctl.errors import UserError
from clusterctl.spec.stackfile import apply_overrides, parse_path


def test_parse_path() -> None:
    assert parse_path("partitions[0].nodes") == ["partitions", 0, "nodes"]
    assert parse_path("validation.nccl.onDeploy") == ["validation", "nccl", "onDeploy"]
    with pytest.raises(UserError):
        parse_path("[0].nodes")


def test_overrides_are_typed_as_yaml_and_do_not_mutate_input() -> None:
    base = {"partitions": [{"nodes": 2}], "tags": {}}
    out = apply_overrides(
        base, ["partitions[0].nodes=64", "partitions[0].spot=true", "validation.nccl.onDeploy=yes"]
    )
    assert out["partitions"][0] == {"nodes": 64, "spot": True}
    assert out["validation"] == {"nccl": {"onDeploy": True}}
    assert base["partitions"][0] == {"nodes": 2}


@pytest.mark.parametrize("bad", ["partitions[5].nodes=1", "nodes", "tags.owner.x=1"])
def test_bad_overrides_are_user_errors(bad: str) -> None:
    with pytest.raises(UserError):
        apply_overrides({"partitions": [{}], "tags": {"owner": "a"}}, [bad])


def test_committed_json_schema_is_current() -> None:
    import json
    from pathlib import Path

    from clusterctl.spec.schema import stack_schema

    committed = json.loads((Path(__file__).parents[3] / "config/stack.schema.json").read_text())
    assert committed == stack_schema(), (
        "run `clusterctl schema --out config/stack.schema.json` and commit it"
    )
    cluster = committed["properties"]["config"]["properties"]["gpu-clusters:cluster"]
    assert cluster["additionalProperties"] is False
    assert "partitions" in cluster["required"]


def test_a_misspelled_key_before_an_index_names_the_key() -> None:
    with pytest.raises(UserError, match="no key 'partitons' here; did you mean 'partitions'"):
        apply_overrides({"partitions": [{"nodes": 2}]}, ["partitons[0].nodes=3"])


@pytest.mark.parametrize(
    "text",
    [
        "config:\n  a: 1\n  a: 2\n",
        "config:\n  gpu-clusters:cluster:\n    partitions:\n      - name: x\n        nodes: 2\n"
        "        name: y\n",
    ],
)
def test_duplicate_keys_are_refused_with_both_lines(text: str, tmp_path) -> None:
    from clusterctl.spec.stackfile import read_stack_config

    (tmp_path / "Pulumi.dup.yaml").write_text(text)
    with pytest.raises(UserError, match=r"appears twice in one mapping \(lines \d and \d\)"):
        read_stack_config("dup", tmp_path)
