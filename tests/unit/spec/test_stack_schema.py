"""The `$schema` modeline of every stack file applies a schema of the whole stack file, so an
editor reports no false errors; in an `init` project the modeline points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from clusterctl.project import example_stacks, init_project
from clusterctl.spec.schema import cluster_schema, stack_schema

ROOT = Path(__file__).parents[3]
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def _errors(schema: dict, doc: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [e.message for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("stack", example_stacks())
def test_the_modeline_of_every_shipped_stack_applies_a_schema_it_passes(stack: str) -> None:
    path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    m = MODELINE.match(path.read_text().splitlines()[0])
    assert m, f"{path.name}: first line is not a yaml-language-server modeline"
    target = (path.parent / m.group(1)).resolve()
    assert target.is_file(), target
    import json

    doc = yaml.safe_load(path.read_text())
    assert _errors(json.loads(target.read_text()), doc) == []
    # Old code: the cluster object's schema, applied to the whole file, reported false errors.
    assert _errors(cluster_schema(), doc)


def test_a_stack_schema_still_catches_a_bad_cluster_key() -> None:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.azure-h100.yaml").read_text())
    doc["config"]["gpu-clusters:cluster"]["nodeCount"] = 4
    assert any("nodeCount" in e for e in _errors(stack_schema(), doc))


def test_an_init_project_modeline_points_at_a_file_in_the_project(tmp_path: Path) -> None:
    """Old code: the copied stack pointed at ../config/, which an init project does not have."""
    import json

    written = init_project("azure-h100", tmp_path / "proj")
    stack = tmp_path / "proj" / "stacks" / "Pulumi.azure-h100.yaml"
    assert stack in written
    m = MODELINE.match(stack.read_text().splitlines()[0])
    assert m
    target = (stack.parent / m.group(1)).resolve()
    assert target.is_file() and target.parent == (tmp_path / "proj").resolve()
    assert _errors(json.loads(target.read_text()), yaml.safe_load(stack.read_text())) == []
