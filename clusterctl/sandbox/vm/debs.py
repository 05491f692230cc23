"""The .deb packages the sandbox builds for its stand-ins: the architecture they are for, and one
package from a file tree. Shared by the apt stand-in (repo.py) and the github.com stand-in
(github.py), so neither imports the other for it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ARCH = "amd64"


def build_deb(tree: Path, fields: dict[str, str], out_dir: Path) -> Path:
    debian = tree / "DEBIAN"
    debian.mkdir(exist_ok=True)
    debian.joinpath("control").write_text("".join(f"{k}: {v}\n" for k, v in fields.items()))
    conffiles = (
        sorted("/" + str(p.relative_to(tree)) for p in (tree / "etc").rglob("*") if p.is_file())
        if (tree / "etc").is_dir()
        else []
    )
    if conffiles:
        debian.joinpath("conffiles").write_text("".join(c + "\n" for c in conffiles))
    out = (
        out_dir
        / f"{fields['Package']}_{fields['Version'].split(':')[-1]}_{fields['Architecture']}.deb"
    )
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zzstd", "-b", str(tree), str(out)],
        check=True,
        capture_output=True,
    )
    return out
