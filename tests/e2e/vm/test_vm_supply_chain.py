"""A booted GPU node refuses a download that is not the pinned one: the lab's github.com stand-in
serves pyxis's tag v0.24.0 moved to another commit (changed source) once, and the node's own
gpucl-pyxis.sh refuses the clone before building or installing anything; with the tag put back
the same script installs pyxis again, so the refusal was the tampering's.

The stand-in's bare repositories are shared by every sandbox on this machine: the test waits to
be alone on it (alone_on_the_machine) and restores the tag in a finally. Root only."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from clusterctl.render.paths import PYXIS_LIBRARY
from clusterctl.sandbox.vm import boot, repo
from tests.e2e.vm.conftest import alone_on_the_machine, booted_stack

pytestmark = pytest.mark.sandbox
TAG = "v0.24.0"
SCRIPT = "/usr/local/libexec/gpu-clusters/gpucl-pyxis.sh"


def _git(*args: str, cwd: Path | None = None) -> str:
    env = ["-c", "user.name=tamper", "-c", "user.email=tamper@localhost"]
    done = subprocess.run(["git", *env, *args], cwd=cwd, check=True, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    return done.stdout.strip()


def test_a_node_refuses_a_pyxis_tag_moved_to_another_commit(tmp_path_factory) -> None:
    print("supply chain:", alone_on_the_machine())
    with booted_stack(tmp_path_factory, nodes=1) as (specs, workdir, reports):
        assert all(r["cloud_init"] == "done" for r in reports.values()), reports
        gpu = next(s for s in specs if s.role == "gpu")

        def sh(cmd: str) -> subprocess.CompletedProcess[str]:
            return boot.run(workdir, gpu.name, ["bash", "-c", cmd], timeout=600)

        # pyxis booted from the genuine stand-in: the pin check passed once already
        assert sh(f"test -e {PYXIS_LIBRARY}").returncode == 0
        _, repo_dir, _ = boot.prepare_layers(None)
        bare = repo.github_dir(repo_dir) / "git" / "NVIDIA" / "pyxis.git"
        genuine = _git("-C", str(bare), "rev-parse", f"{TAG}^{{commit}}")
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "pyxis"
            _git("clone", "-q", str(bare), str(work))
            _git("checkout", "-q", TAG, cwd=work)
            (work / "pyxis_slurmstepd.c").write_text(
                (work / "pyxis_slurmstepd.c").read_text() + "\n/* tampered */\n"
            )
            _git("commit", "-qam", "tampered release", cwd=work)
            _git("tag", "-f", TAG, cwd=work)
            _git("push", "-q", "--force", "origin", f"refs/tags/{TAG}", cwd=work)
        try:
            # make the node fetch again: no installed plugin, no build in the cluster's cache
            sh(f"mv {PYXIS_LIBRARY} /root/pyxis.so.kept; mkdir -p /root/cache.kept && "
               "mv /sched/*/build/pyxis-* /root/cache.kept/ 2>/dev/null; true")  # fmt: skip
            refused = sh(SCRIPT)
            assert refused.returncode != 0, refused.stdout
            assert f"REFUSED pyxis {TAG}: the clone is commit" in refused.stderr, refused.stderr
            assert sh(f"test -e {PYXIS_LIBRARY}").returncode != 0, "a refused pyxis installed"
            assert sh("ls /sched/*/build/ | grep -c '^pyxis-'").stdout.strip() in ("", "0")
        finally:
            _git("-C", str(bare), "tag", "-f", TAG, genuine)
        again = sh(SCRIPT)
        assert again.returncode == 0, again.stderr
        assert sh(f"test -e {PYXIS_LIBRARY}").returncode == 0
