"""Submit a Python function to the cluster from the login node with submitit, and get its result.

On the login node, once (the login node has python3-venv; pip uses the cluster's index):
    python3 -m venv ~/venv && ~/venv/bin/pip install submitit==1.5.4
then:
    ~/venv/bin/python submitit_hello.py [PARTITION]

submitit pickles the function into ~/submitit-logs (the shared home, which the GPU nodes see),
submits an sbatch job that runs it there with the same venv's python, and unpickles the result.
The job's stdout and stderr stay in ~/submitit-logs/<job id>_0_log.{out,err}.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import submitit

WAIT_S = 600
"""How long to wait for the job (queueing included) before cancelling it."""


def where_am_i(greeting: str) -> dict:
    """Runs on the GPU node: what Slurm gave this job."""
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return {
        "greeting": greeting,
        "host": socket.gethostname(),
        "slurm_node": os.environ.get("SLURMD_NODENAME"),
        "job": os.environ.get("SLURM_JOB_ID"),
        "gpus_visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpus_listed": len(gpus.splitlines()),
    }


def main() -> int:
    partition = sys.argv[1] if len(sys.argv) > 1 else "gpu"
    executor = submitit.AutoExecutor(folder="~/submitit-logs")
    executor.update_parameters(
        slurm_partition=partition, nodes=1, tasks_per_node=1, gpus_per_node=1, timeout_min=10
    )
    job = executor.submit(where_am_i, f"hello from {os.environ.get('USER')}")
    print(f"submitted job {job.job_id} to partition {partition}", flush=True)
    deadline = time.monotonic() + WAIT_S
    while not job.done():
        if time.monotonic() > deadline:
            job.cancel()
            print(f"job {job.job_id} not done within {WAIT_S} s: cancelled", file=sys.stderr)
            return 1
        time.sleep(2)
    print(job.result())
    return 0


if __name__ == "__main__":
    sys.exit(main())
