"""`clusterctl validate --nccl`: launch all_reduce (or the sandbox probe), judge it, report it.

run         one validation from target to outcome: launch, parse, judge, localise, drain
recheck     `--resume NODE`: return a node validate drained once a pair test passes
targets     where to run: stack outputs, --host, --kubeconfig, --sandbox, or --from-log
thresholds  which floor applies: catalog baseline < stack override < command line
transport   the user's own `ssh` as a subprocess
slurm_launcher / k8s_launcher   run the benchmark and bring back its output
sweep       2-node pairs in parallel, wired to clusterctl.nccl.localize; suspects re-run once
peers       how the peer check's suspects (first figure, re-run, verdict) read in every output
drain       take suspects out of service (Slurm drain)
k8s_nodes   the same on Kubernetes: cordon, taint and annotate; `--resume` re-tests and uncordons
hook        the post-deploy check `pulumi up` runs when validation.nccl.onDeploy is true
history     every run kept per stack in a SQLite file; the first accepted run
train       `--train`: the training program on one node, then on all, judged (clusterctl.train)
train_k8s   `--train` on Kubernetes: the same as an MPIJob (mpirun -> torchrun on every worker)
"""

from __future__ import annotations


class CouldNotRun(Exception):
    """The validation could not be carried out (exit 2): unreachable, not started, unparsable."""
