"""`clusterctl users add|remove|list`: the team of a Slurm stack as a day-2 operation.

The stack file is the team's one record: `add` and `remove` edit it (comments kept), refuse what
`plan` would refuse, and leave the file as it was on any error. The running cluster gets the
change from the team sync, Azure's Run Command on the scheduler: `clusterctl up -s STACK` runs it
again because its text changed (no reboot, no redeploy). `--sandbox` runs the same script on the
local sandbox's scheduler (as root over SSH, as the Run Command runs it).

Exit codes: 0 done; 2 refused (bad input) or could not run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from clusterctl.cli.common import (
    JsonOpt,
    SandboxDirOpt,
    SandboxOpt,
    StackOpt,
    err,
    out,
    sandbox_workdir,
)
from clusterctl.errors import UserError


def _key_text(key: str) -> str:
    """A key given as a .pub file's path, or as the key's text itself."""
    path = Path(key).expanduser()
    if key.startswith(("ssh-", "ecdsa-", "sk-")):
        return key.strip()
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    if " " not in key.strip():  # one word that is not a key: a path that is not there
        raise UserError(f"--key {key}: no such file (give a .pub file or the key's text)")
    return key.strip()


def _write_checked(stack: str, new_text: str) -> None:
    """Validate the edited stack as `plan` would; write it only if it passes."""
    from clusterctl.spec.load import load_spec
    from clusterctl.spec.model import CONFIG_KEY
    from clusterctl.spec.stackfile import load_yaml, stack_path

    raw = (load_yaml(new_text) or {}).get("config", {}).get(CONFIG_KEY)
    load_spec(raw)  # a SpecError: one line per problem, exit 2, the file untouched
    stack_path(stack).write_text(new_text, encoding="utf-8")


def _push(stack: str, sandbox: str | None, *, changed: bool = True) -> None:
    """Run the team sync on the sandbox's scheduler; on the cloud, say how the file's change
    gets there (`changed`: add or remove edited the file; sync did not)."""
    from clusterctl.spec.load import load_stack_spec

    spec, _ = load_stack_spec(stack)
    if sandbox is None:
        if not changed:
            raise UserError(
                f"users sync -s {stack} changes nothing on its own: `clusterctl up -s {stack}` "
                "brings a cloud cluster's team to the stack file; `users sync --sandbox` the "
                "local sandbox's"
            )
        out.print(
            f"the stack file now declares {len(spec.users)} user(s); `clusterctl up -s {stack}` "
            "applies it in place (the team Run Command on the scheduler; nodes take it within a "
            "minute, no reboot)"
        )
        return
    from clusterctl.cli.common import resolve_target
    from clusterctl.render.team import render_team_sync
    from clusterctl.validate.targets import SlurmTarget
    from clusterctl.validate.transport import Ssh

    target = resolve_target(sandbox=sandbox)
    if not isinstance(target, SlurmTarget):
        raise UserError("users --sandbox: the sandbox has no Slurm scheduler")
    script = render_team_sync(spec, stack)
    proc = Ssh(target.ssh).run("sudo bash -s", input=script, timeout=300, check=False)
    for line in proc.stdout.splitlines():
        out.print(line, highlight=False, markup=False)
    if proc.returncode != 0:
        raise UserError(
            f"the team sync failed on the sandbox's scheduler ({proc.returncode}): "
            f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'no output'}"
        )
    out.print("the sandbox's scheduler has the team now; its other nodes take it within a minute")


def register(app: typer.Typer) -> None:
    users = typer.Typer(help="The team of a Slurm stack: users, their accounts and keys.")
    app.add_typer(users, name="users")

    @users.command("add")
    def add_cmd(
        name: Annotated[str, typer.Argument(help="Login name (a-z, 0-9, _ and -).")],
        stack: StackOpt,
        uid: Annotated[int, typer.Option("--uid", help="The same uid on every node.")],
        account: Annotated[str, typer.Option("--account", help="A declared account.")],
        key: Annotated[
            list[str],
            typer.Option(
                "--key", metavar="KEY", help="An SSH public key, or a .pub file; repeatable."
            ),
        ],
        admin: Annotated[bool, typer.Option("--admin", help="sudo on every node.")] = False,
        sandbox: SandboxOpt = False,
        sandbox_dir: SandboxDirOpt = None,
    ) -> None:
        """Add a user to the stack's team (and, with --sandbox, to the running sandbox)."""
        from clusterctl.spec.stack_edit import add_user
        from clusterctl.spec.stackfile import stack_path

        text = stack_path(stack).read_text(encoding="utf-8")
        entry: dict = {"name": name, "uid": uid, "account": account}
        if admin:
            entry["admin"] = True
        entry["sshPublicKeys"] = [_key_text(k) for k in key]
        _write_checked(stack, add_user(text, entry))
        err.print(f"users: {name} added to {stack_path(stack).name}", highlight=False)
        _push(stack, sandbox_workdir(sandbox, sandbox_dir))

    @users.command("remove")
    def remove_cmd(
        name: Annotated[str, typer.Argument(help="A user of the stack.")],
        stack: StackOpt,
        sandbox: SandboxOpt = False,
        sandbox_dir: SandboxDirOpt = None,
    ) -> None:
        """Take a user's logins and Slurm associations away; their files stay."""
        from clusterctl.spec.stack_edit import remove_user
        from clusterctl.spec.stackfile import stack_path

        text = stack_path(stack).read_text(encoding="utf-8")
        _write_checked(stack, remove_user(text, name))
        err.print(f"users: {name} removed from {stack_path(stack).name}", highlight=False)
        _push(stack, sandbox_workdir(sandbox, sandbox_dir))

    @users.command("sync")
    def sync_cmd(
        stack: StackOpt, sandbox: SandboxOpt = False, sandbox_dir: SandboxDirOpt = None
    ) -> None:
        """Bring the running sandbox's team to what the stack declares (a cloud cluster gets it
        from `clusterctl up`)."""
        _push(stack, sandbox_workdir(sandbox, sandbox_dir), changed=False)

    @users.command("list")
    def list_cmd(stack: StackOpt, as_json: JsonOpt = False) -> None:
        """The team as the stack declares it."""
        from clusterctl.platform import scheduler_of
        from clusterctl.spec.load import load_stack_spec

        spec, _ = load_stack_spec(stack)
        if not scheduler_of(spec.scheduler).head_node:
            raise UserError(
                f"stack {stack} is a Kubernetes cluster: it has no Slurm team (users are the "
                "cloud's identities there)"
            )
        if as_json:
            doc = [{"name": u.name, "uid": u.uid, "account": u.account, "admin": u.admin,
                    "sshPublicKeys": list(u.ssh_public_keys)} for u in spec.users]  # fmt: skip
            sys.stdout.write(json.dumps({"stack": stack, "users": doc}, indent=2) + "\n")
            return
        if not spec.users:
            out.print(
                f"stack {stack} declares no users (add one with `clusterctl users add NAME -s "
                f"{stack} --uid N --account A --key KEY.pub`)",
                highlight=False,
            )
        for user in spec.users:
            role = " admin" if user.admin else ""
            out.print(f"{user.name}\tuid {user.uid}\taccount {user.account}{role}", highlight=False)
