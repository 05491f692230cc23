"""gpucl-mounts.sh run under bash with stand-ins for mount and mountpoint: mount fails with
`message` until its `ready_after`-th try (the first try hangs 60 s when `hang`), then records
what it mounted in <tmp>/mounted, which mountpoint reads."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import node_script

FAKE_MOUNT = """#!/bin/sh
n=$(cat "$STATE/tries" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$STATE/tries"
if [ "$n" = 1 ] && [ -n "$HANG" ]; then sleep 60; fi
if [ "$n" -lt "$READY_AFTER" ]; then
  echo "mount.nfs: $MESSAGE while mounting $1" >&2; exit 32
fi
echo "$1" >> "$STATE/mounted"
"""
FAKE_MOUNTPOINT = """#!/bin/sh
grep -qx "$2" "$STATE/mounted" 2>/dev/null
"""
QUICK_SLEEP = '#!/bin/sh\n[ "$1" = 60 ] && exec /bin/sleep 60\nexec /bin/sleep 0.05\n'
"""A hung mount sleeps 60 s; the script's delays between tries take 0.05 s."""


def run_mounts(
    tmp_path: Path,
    *args: str,
    ready_after: int,
    message: str,
    hang: bool = False,
    quick_sleep: bool = False,
    settings: dict[str, str],
    timeout: int = 30,
) -> subprocess.CompletedProcess[str]:
    """`settings`: the script's GPUCL_MOUNT_* bounds (DELAY, TOTAL, ATTEMPT), by suffix;
    `quick_sleep`: sleep is QUICK_SLEEP."""
    script = tmp_path / "gpucl-mounts.sh"
    script.write_text(node_script("azure-h100", "gpucl-mounts.sh"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_ins = {"mount": FAKE_MOUNT, "mountpoint": FAKE_MOUNTPOINT, "mkdir": "#!/bin/sh\n"}
    if quick_sleep:
        stand_ins["sleep"] = QUICK_SLEEP
    for name, text in stand_ins.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STATE": str(tmp_path),
        "READY_AFTER": str(ready_after),
        "MESSAGE": message,
        "HANG": "1" if hang else "",
        **{f"GPUCL_MOUNT_{k}": v for k, v in settings.items()},
    }
    return subprocess.run(
        ["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=timeout
    )
