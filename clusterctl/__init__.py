"""Provision, validate and tear down cloud GPU clusters (the `clusterctl` command and its parts).

Packages, top layer first (pyproject.toml's import contract keeps each to those below it):
  cli         the `clusterctl` command line; the one place that joins the parts below
  plan        `clusterctl plan`: the Pulumi program under Pulumi's mocks, offline
  nodes       day-2 node operations (`clusterctl node replace`)
  notebook    `clusterctl notebook`: JupyterLab as a job on a GPU node, through a local tunnel
  sandbox     the local sandbox: a stack's nodes booted like VMs on this machine (in a source
              checkout only: the built wheel leaves it out)
  acceptance  the acceptance report `validate --report` writes (HTML, PNG, SVG; matplotlib)
  validate    `clusterctl validate --nccl | --train`: launch, judge, localise, drain
  lifecycle   `clusterctl up / status / down` over the user's `pulumi` CLI
  render      spec -> every file that lands on a node or in a cluster (jinja2)
  spec        stack file -> validated ClusterSpec, the catalog and the rules
  probe       a stdlib ring all-reduce for clusters without GPUs
  nccl        nccl-tests output: parse, judge, report, localise (stdlib)
  train       the training check: the program torchrun runs, its output parsed and judged
  project     where the user's project, stack files and state are
  platform    a cloud times a scheduler: one object per scheduler, what a platform does not support
  clouds      one module per cloud (azure, aws), each answering every per-cloud question
  errors      the one-line-per-problem UserError
  outputs     the stack outputs: the contract between the program and the commands
  power       the power program copied to the scheduler (gpucl-power)
  monitor     the Slurm exporter copied to the scheduler (gpucl-slurm-metrics)
  interrupt   Ctrl-C handling
  constants   values with one home (the drain prefix, the NCCL sweep's bounds, the exit codes)
  figures     money as the commands print it ("unknown" without a price), JSON without float noise
  host_tools  the host programs the sandbox runs, with their Debian packages (`doctor` lists them)
"""

__version__ = "0.1.0"
