"""The power program (`gpucl-power resume|suspend|fail|reimage|redeploy|state HOSTLIST`).

Runs on the scheduler as Slurm's ResumeProgram, SuspendProgram and ResumeFailProgram
(docs/decisions/0001). Standard library only, except `azure_backend`
(azure-identity + azure-mgmt-compute, imported when that backend is chosen): cloud-init copies
this package to /opt/gpucl/lib/gpucl_power and runs it with the pinned venv /opt/gpucl/venv, so
every import inside it is relative. Only Azure's backend ships; another is a module placed beside
these (program.make_backend), as the VM sandbox places its own.

  program        the actions, the config (power.json + power.d), the backend chosen by name
  backend        the protocol every backend implements (list, state, start, stop, delete, ...)
  azure_backend  scale-set VMs started and deallocated with azure-mgmt-compute
  names          Slurm node name <-> scale set and instance id: the cluster's name map
  slurm          the few Slurm commands it runs (scontrol, squeue, sinfo)
  events         `gpucl-events`: a GPU node watches Azure Scheduled Events for itself
  down_billing   nodes DOWN with their VM running: the record `status` reads, the metrics file
  fabric         a GB200 node reports its NVLink domain; the scheduler checks topology.conf's blocks
"""
