"""`clusterctl notebook`: JupyterLab as a job on a GPU node of the stack, as the user who runs it.

Slurm: submitted over SSH to the login node (the scheduler where the stack has none) as the
user's own ssh login; the URL is reached through `ssh -L` over the same login. Kubernetes: a Job
in the cluster's Kueue queue, reached with `kubectl port-forward`. Ctrl-C, SIGTERM or the job's
time limit end it: the job is cancelled and the command says so.

Exit codes: 0 the notebook served and was ended; 2 bad input; 3 it never served (the job failed
or a wait ran out), or its tunnel broke.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clusterctl.cli.common import SandboxDirOpt, SandboxOpt, StackOpt, err, out, sandbox_workdir
from clusterctl.errors import UserError

if TYPE_CHECKING:
    from clusterctl.notebook.request import NotebookRequest
    from clusterctl.spec.model import ClusterSpec
    from clusterctl.validate.transport import SshTarget

GpusOpt = Annotated[
    int | None, typer.Option("--gpus", min=1, help="Whole GPUs on one node (default 1).")
]
GresOpt = Annotated[
    str | None,
    typer.Option(
        "--gres",
        help="Slurm's GRES instead of --gpus: gpu:PROFILE:N for MIG slices (gpu:1g.10gb:1), "
        "shard:N for a shared GPU.",
    ),
]
TimeOpt = Annotated[
    str, typer.Option("--time", help="How long the notebook may run: 90m, 4h, 1d (default 4h).")
]
PartitionOpt = Annotated[
    str | None,
    typer.Option("--partition", help="The partition (node pool); default the stack's first."),
]
UserOpt = Annotated[
    str | None,
    typer.Option("--user", help="Your login on the cluster (default: what your ssh config says)."),
]
IdentityOpt = Annotated[
    str | None, typer.Option("--identity", help="Your SSH private key (ssh -i).")
]


def _pin() -> str:
    from clusterctl.spec.catalog import catalog

    pins = (catalog().versions.get("notebook") or {}).get("pypi") or {}
    return str(pins["jupyterlab"])


def _slurm_login(stack: str, user: str | None, identity: str | None) -> SshTarget:
    """The SshTarget of the deployed stack's login node (else its scheduler), as the user."""
    from clusterctl import outputs
    from clusterctl.project import find_project
    from clusterctl.validate.targets import read_stack_outputs
    from clusterctl.validate.transport import SshTarget

    got = outputs.reader("notebook", read_stack_outputs(stack, find_project()))
    host = (got.get(outputs.LOGIN_ADDRESSES) or [None])[0] or got.get(outputs.SCHEDULER_ADDRESS)
    if not host:
        raise UserError(f"stack {stack}: no login or scheduler address output; is it deployed?")
    return SshTarget(host=str(host), user=user, identity=identity)


def _slurm(
    stack: str,
    request: NotebookRequest,
    *,
    user: str | None,
    identity: str | None,
    sandbox: str | None,
) -> int:
    from clusterctl.notebook.session import run_notebook
    from clusterctl.notebook.slurm import SlurmNotebook
    from clusterctl.validate.transport import Ssh

    if sandbox is not None:
        from clusterctl.cli.common import need_sandbox

        need_sandbox("notebook --sandbox")
        if not user:
            raise UserError("notebook --sandbox: --user NAME (a user of the stack's team)")
        from clusterctl.sandbox.vm.target import sandbox_login_target

        target = sandbox_login_target(Path(sandbox), user, identity)
    else:
        target = _slurm_login(stack, user, identity)
    nb = SlurmNotebook(Ssh(target), request, _pin())
    return run_notebook(nb, say=_say, show_url=_show)


def _kube(stack: str, spec: ClusterSpec, request: NotebookRequest) -> int:
    from clusterctl import outputs
    from clusterctl.lifecycle.kubeconfig import stack_kubeconfig
    from clusterctl.notebook.kube import KubeNotebook, job_name, notebook_job, queue_of
    from clusterctl.notebook.session import run_notebook
    from clusterctl.project import find_project
    from clusterctl.render.kubernetes import training_image
    from clusterctl.validate.targets import read_stack_outputs

    queue = queue_of(spec, stack)
    project = find_project()
    got = outputs.reader("notebook", read_stack_outputs(stack, project))
    kubeconfig = str(stack_kubeconfig(project.dir, stack, got.get(outputs.KUBECONFIG)))
    manifest = notebook_job(spec, request, name=job_name(), queue=queue,
                            image=training_image(), version=_pin())  # fmt: skip
    return run_notebook(KubeNotebook(kubeconfig, manifest), say=_say, show_url=_show)


def _say(line: str) -> None:
    err.print(line, highlight=False, markup=False, soft_wrap=True)


def _show(url: str) -> None:
    out.print(url, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    @app.command("notebook")
    def notebook_cmd(
        stack: StackOpt,
        gpus: GpusOpt = None,
        gres: GresOpt = None,
        time: TimeOpt = "4h",
        partition: PartitionOpt = None,
        user: UserOpt = None,
        identity: IdentityOpt = None,
        sandbox: SandboxOpt = False,
        sandbox_dir: SandboxDirOpt = None,
    ) -> None:
        """JupyterLab on a GPU node of the stack: prints a local URL with its token; Ctrl-C
        ends it and cancels the job."""
        from clusterctl.notebook.request import notebook_request
        from clusterctl.platform import scheduler_of
        from clusterctl.spec.catalog import catalog
        from clusterctl.spec.load import load_stack_spec

        spec, _ = load_stack_spec(stack)
        request = notebook_request(
            spec, catalog(), stack, gpus=gpus, gres=gres, time=time, partition=partition
        )
        workdir = sandbox_workdir(sandbox, sandbox_dir)
        if not scheduler_of(spec.scheduler).head_node:
            if workdir or user or identity:
                raise UserError(
                    f"stack {stack} is a Kubernetes cluster: --sandbox, --user and --identity "
                    "are for Slurm (kubectl uses the stack's kubeconfig)"
                )
            raise typer.Exit(_kube(stack, spec, request))
        code = _slurm(stack, request, user=user, identity=identity, sandbox=workdir)
        raise typer.Exit(code)
