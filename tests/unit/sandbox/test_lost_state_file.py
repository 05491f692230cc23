"""A sandbox whose state file is lost is still found by its workdir: its disks image and nodes
folder are resources `down` removes, and `status` says the sandbox is there and how to release it
(old code: `down` left both while saying nothing was left; `status` said there was no sandbox)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from clusterctl.sandbox.vm import machine, report


def cli(*args: str):
    from clusterctl.cli import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "300"})


def test_the_disks_image_and_nodes_folder_are_found_without_a_state_file(tmp_path: Path) -> None:
    workdir = tmp_path / "sbx"
    (workdir / "nodes").mkdir(parents=True)
    (workdir / machine.DISKS_IMAGE).write_bytes(b"")
    dirs = {r.name for r in report.found_resources(workdir) if r.kind == "dir"}
    assert dirs == {str(workdir / machine.DISKS_IMAGE), str(workdir / "nodes")}
    assert f"dir {workdir / 'nodes'}" in report.leftovers(workdir)


def test_status_without_a_state_file_names_what_is_there_and_the_way_out(tmp_path: Path) -> None:
    workdir = tmp_path / "sbx"
    (workdir / "nodes").mkdir(parents=True)
    got = cli("sandbox", "status", "--workdir", str(workdir))
    assert got.exit_code == 1
    assert "no state file" in got.output and "but a sandbox is there" in got.output
    assert f"clusterctl sandbox down --workdir {workdir}" in got.output
    empty = tmp_path / "none"
    empty.mkdir()
    got = cli("sandbox", "status", "--workdir", str(empty))
    assert got.exit_code == 1 and f"no VM sandbox in {empty}" in got.output
