"""A booted GPU node refuses a download that is not the pinned one: pyxis's tag v0.24.0 moved to
another commit (a changed source, as a compromised or re-tagged upstream would serve it), and the
node's own gpucl-pyxis.sh refuses the clone before building or installing anything; with the
genuine source back the same script installs pyxis again, so the refusal was the tampering's.

The tampered repository is a clone of what the lab's github.com stand-in serves, made inside the
node, and the node's git is sent to it for https://github.com/NVIDIA/pyxis.git (`insteadOf` in
/etc/gitconfig):
the stand-in every sandbox on this machine shares is not touched. Root only."""

from __future__ import annotations

import subprocess

import pytest

from clusterctl.render.paths import PYXIS_LIBRARY
from tests.e2e.vm.conftest import booted_stack

pytestmark = pytest.mark.sandbox
TAG = "v0.24.0"
SCRIPT = "/usr/local/libexec/gpu-clusters/gpucl-pyxis.sh"
UPSTREAM = "https://github.com/NVIDIA/pyxis.git"
TAMPER = f"""set -e
export HOME=/root
rm -rf /root/tampered.git /root/work
git clone -q --bare {UPSTREAM} /root/tampered.git
git clone -q /root/tampered.git /root/work
cd /root/work && git checkout -q {TAG}
echo '/* tampered */' >> pyxis_slurmstepd.c
git -c user.name=tamper -c user.email=tamper@localhost commit -qam 'tampered release'
git tag -f {TAG} >/dev/null && git push -q --force origin refs/tags/{TAG}
git config --system url.file:///root/tampered.git.insteadOf {UPSTREAM}
"""


def test_a_node_refuses_a_pyxis_tag_moved_to_another_commit(tmp_path_factory) -> None:
    from clusterctl.sandbox.vm import boot

    with booted_stack(tmp_path_factory, nodes=1) as (specs, workdir, reports):
        gpu = next(s for s in specs if s.role == "gpu")

        def sh(cmd: str) -> subprocess.CompletedProcess[str]:
            return boot.run(workdir, gpu.name, ["bash", "-c", cmd], timeout=600)

        # pyxis booted from the genuine stand-in: the pin check passed once already
        assert reports[gpu.name]["cloud_init"] == "done", reports
        assert sh(f"test -e {PYXIS_LIBRARY}").returncode == 0
        tamper = sh(TAMPER)
        assert tamper.returncode == 0, tamper.stdout + tamper.stderr
        # make the node fetch again: no installed plugin, no build in the cluster's cache
        sh(f"mv {PYXIS_LIBRARY} /root/pyxis.so.kept; mkdir -p /root/cache.kept && "
           "mv /sched/*/build/pyxis-* /root/cache.kept/ 2>/dev/null; true")  # fmt: skip
        refused = sh(SCRIPT)
        assert refused.returncode != 0, refused.stdout
        assert f"REFUSED pyxis {TAG}: the clone is commit" in refused.stderr, refused.stderr
        assert sh(f"test -e {PYXIS_LIBRARY}").returncode != 0, "a refused pyxis installed"
        assert sh("ls /sched/*/build/ | grep -c '^pyxis-.*tar.gz$'").stdout.strip() in ("", "0")
        assert sh("git config --system --unset url.file:///root/tampered.git.insteadOf"
                  ).returncode == 0  # fmt: skip
        again = sh(SCRIPT)
        assert again.returncode == 0, again.stderr
        assert sh(f"test -e {PYXIS_LIBRARY}").returncode == 0
