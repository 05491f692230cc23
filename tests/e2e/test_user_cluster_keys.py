"""A team user in a job's allocation can `ssh gpu-pg0-2` from gpu-pg0-1 (mpirun, pdsh, deepspeed
launchers): gpucl-users.sh gives each declared user a key pair of the cluster's own in their shared
home, authorized there, made as the user. The rendered script runs here against temporary folders,
with stand-ins for the user database (getent, useradd, ...) and the real setpriv and ssh-keygen:
the key is made as an unprivileged uid, so this needs root (the e2e suite). The host-key half is
tests/unit/render/test_ssh_between_nodes.py."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import need_tool, node_script

TEAM = "azure-team"
LIBEXEC = "/usr/local/libexec/gpu-clusters"


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# The user database the script sees: /etc-format files in $STATE, changed by the stand-ins.
GETENT = r"""#!/bin/bash
file=$STATE/$1
[ -f "$file" ] || exit 2
if [ -z "${2:-}" ]; then cat "$file"; exit 0; fi
awk -F: -v k="$2" '$1 == k || (k ~ /^[0-9]+$/ && $3 == k) { print; found = 1; exit }
  END { exit !found }' "$file"
"""
USERADD = r"""#!/bin/bash
echo "useradd $*" >> "$STATE/calls"
while [ $# -gt 1 ]; do
  case $1 in -u) uid=$2; shift ;; -g) gid=$2; shift ;; -d) home=$2; shift ;; -s) sh=$2; shift ;;
    -c) tag=$2; shift ;; -p) shift ;; esac
  shift
done
echo "$1:x:$uid:$gid:$tag:$home:$sh" >> "$STATE/passwd"
echo "$1:*:20000:0:99999:7:::" >> "$STATE/shadow"
"""
GROUPADD = r"""#!/bin/bash
echo "groupadd $*" >> "$STATE/calls"
gid=$((30000 + RANDOM % 1000))
while [ $# -gt 1 ]; do case $1 in -g) gid=$2; shift ;; esac; shift; done
echo "$1:x:$gid:" >> "$STATE/group"
"""
LOGGED = """#!/bin/bash
echo "$(basename "$0") $*" >> "$STATE/calls"
"""
ID = r"""#!/bin/bash
case "$1 $#" in
  "-u 2") awk -F: -v n="$2" '$1 == n { print $3 }' "$STATE/passwd" ;;
  "-nG 2") echo "$2" ;;
  *) exec /usr/bin/id "$@" ;;
esac
"""
MOUNTPOINT = """#!/bin/bash
[ -e "$STATE/mounted" ]
"""
TAG = "gpu-clusters team"


def _stand_ins(bin_: Path) -> None:
    bin_.mkdir()
    for name, text in {"getent": GETENT, "useradd": USERADD, "groupadd": GROUPADD,
                       "usermod": LOGGED, "gpasswd": LOGGED, "id": ID,
                       "mountpoint": MOUNTPOINT}.items():  # fmt: skip
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)


def _need_root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the e2e suite runs as root in CI")
        pytest.skip("makes a key as another uid (setpriv): needs root, as CI runs")
    need_tool("setpriv")  # util-linux
    need_tool("ssh-keygen")  # openssh-client


@pytest.fixture
def cluster():
    """A node's view: the team dir, a mounted shared /home, the user database. Everything in a
    folder any uid may traverse: the script re-runs itself as the user."""
    _need_root()
    user = pwd.getpwnam("nobody")  # a real unprivileged uid (ssh-keygen needs a passwd entry)
    root = Path(tempfile.mkdtemp(prefix="gpucl-users-"))
    root.chmod(0o755)
    script = root / "gpucl-users.sh"
    script.write_text(node_script(TEAM, "gpucl-users.sh"))
    script.chmod(0o755)
    _stand_ins(root / "bin")
    (root / "team").mkdir()
    (root / "team" / "users.tsv").write_text(f"ann\t{user.pw_uid}\tvision\tno\n")
    (root / "home").mkdir(mode=0o755)
    (root / "mounted").touch()
    (root / "passwd").write_text(
        f"dan:x:20005:20005:{TAG}:/home/dan:/bin/bash\n"
        f"eve:x:20006:20006:{TAG}:/home/eve:/usr/sbin/nologin\n"
    )
    (root / "shadow").write_text("dan:*:20000:0:99999:7:::\neve:*:20000:0:99999:7::1:\n")
    (root / "group").write_text("")
    for gone in ("dan", "eve"):  # removed from the team: dan now, eve (locked) before
        (root / "home" / gone).mkdir(mode=0o750)
    env = {
        "PATH": f"{root / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin",
        "STATE": str(root),
        "GPUCL_TEAM_DIR": str(root / "team"),
        "GPUCL_HOMES": str(root / "home"),
    }

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                              timeout=60)  # fmt: skip

    yield root, user.pw_uid, run, env, script
    shutil.rmtree(root)


def _tree(home: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every entry below home: mode, owner, mtime, content."""
    out = {}
    for p in sorted(home.rglob("*")):
        st = p.lstat()
        body = p.read_bytes() if p.is_file() else b""
        out[str(p.relative_to(home))] = (st.st_mode, st.st_uid, st.st_mtime_ns, body)
    return out


def test_a_declared_user_gets_a_key_made_as_them_authorized_once(cluster) -> None:
    root, uid, run, _, _ = cluster
    done = run()
    assert done.returncode == 0, done.stderr
    ssh = root / "home" / "ann" / ".ssh"
    key, pub, auth = ssh / "id_ed25519", ssh / "id_ed25519.pub", ssh / "authorized_keys"
    for path in (ssh, key, pub, auth):
        assert path.stat().st_uid == uid, f"{path.name} is not the user's: made as root?"
    assert (_mode(ssh), _mode(key), _mode(auth)) == (0o700, 0o600, 0o600)
    line = pub.read_text().strip()
    assert line.startswith("ssh-ed25519 ") and line.endswith(" ann@team")
    assert auth.read_text().splitlines() == [line]
    # the pair is a pair: the public half derives from the private one
    derived = subprocess.run(["ssh-keygen", "-y", "-f", str(key)], capture_output=True,
                             text=True, check=True).stdout.split()[:2]  # fmt: skip
    assert derived == line.split()[:2]
    before = _tree(root / "home")
    again = run()
    assert again.returncode == 0, again.stderr
    assert _tree(root / "home") == before  # a second run (every minute) changes nothing
    assert not list(ssh.glob(".id_ed25519.gpucl*"))


def test_the_users_own_authorized_keys_lines_stay(cluster) -> None:
    root, uid, run, _, _ = cluster
    ssh = root / "home" / "ann" / ".ssh"
    ssh.mkdir(parents=True, mode=0o700)
    own = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID6ahndl3o5DrCBL6gih7e6Q7j7G4Xr4Mh7cXn/TnmFS a@pc"
    (ssh / "authorized_keys").write_text("# mine\n" + own)  # no newline at the end
    for p in (root / "home" / "ann", ssh, ssh / "authorized_keys"):
        os.chown(p, uid, uid)
    assert run().returncode == 0
    ours = (ssh / "id_ed25519.pub").read_text().strip()
    assert (ssh / "authorized_keys").read_text() == f"# mine\n{own}\n{ours}\n"
    run()
    assert (ssh / "authorized_keys").read_text().count(ours) == 1


def test_a_run_cut_short_after_authorizing_finishes_with_the_same_key(cluster) -> None:
    root, _, run, _, _ = cluster
    run()
    ssh = root / "home" / "ann" / ".ssh"
    # as if killed between the append and the rename: the pair still beside its place
    (ssh / "id_ed25519").rename(ssh / ".id_ed25519.gpucl")
    (ssh / "id_ed25519.pub").rename(ssh / ".id_ed25519.gpucl.pub")
    pub = (ssh / ".id_ed25519.gpucl.pub").read_text().strip()
    assert run().returncode == 0
    assert (ssh / "id_ed25519.pub").read_text().strip() == pub
    assert (ssh / "authorized_keys").read_text().splitlines() == [pub]


def test_nodes_at_once_on_the_shared_home_make_one_key(cluster) -> None:
    root, _, _, env, script = cluster
    # the users exist already (the database stand-ins are not made for concurrent writes)
    ann = f"ann:x:{pwd.getpwnam('nobody').pw_uid}:1:{TAG}:/home/ann:/bin/bash\n"
    (root / "passwd").write_text((root / "passwd").read_text() + ann)
    (root / "shadow").write_text((root / "shadow").read_text() + "ann:*:20000:0:99999:7:::\n")
    (root / "group").write_text("ann:x:1:\n")
    procs = [subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]  # fmt: skip
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    ssh = root / "home" / "ann" / ".ssh"
    pub = (ssh / "id_ed25519.pub").read_text().strip()
    assert (ssh / "authorized_keys").read_text().splitlines() == [pub]
    assert sum("made" in out for out, _ in results) == 1, results


def test_removed_and_locked_users_are_not_touched(cluster) -> None:
    root, _, run, _, _ = cluster
    before = {u: _tree(root / "home" / u) for u in ("dan", "eve")}
    assert run().returncode == 0
    for user in ("dan", "eve"):
        assert not (root / "home" / user / ".ssh").exists(), user
        assert _tree(root / "home" / user) == before[user]
    assert "usermod -e 1 -s /usr/sbin/nologin dan" in (root / "calls").read_text()


def test_a_key_is_made_once_the_shared_home_is_mounted_not_before(cluster) -> None:
    root, _, run, _, _ = cluster
    (root / "mounted").unlink()
    assert run().returncode == 0
    assert not (root / "home" / "ann").exists()  # not in the mount point's own folder
    (root / "mounted").touch()
    assert run().returncode == 0
    assert (root / "home" / "ann" / ".ssh" / "id_ed25519").is_file()


def test_the_key_mode_refuses_root(cluster) -> None:
    root, _, _, env, script = cluster
    home = root / "home" / "x"
    home.mkdir()
    done = subprocess.run(["bash", str(script), "key", str(home), "x@team"], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "as the user" in done.stderr
    assert not (home / ".ssh").exists()
