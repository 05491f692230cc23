"""The power program (`gpucl-power resume|suspend|fail|reimage|redeploy|state HOSTLIST`).

Runs on the scheduler as Slurm's ResumeProgram, SuspendProgram and ResumeFailProgram (issue 13).
Standard library only, except `azure_backend` (azure-identity + azure-mgmt-compute, imported when
that backend is chosen): cloud-init copies this package to /opt/gpucl/lib/gpucl_power and runs it
with the pinned venv /opt/gpucl/venv, so every import inside it is relative. Only Azure's backend
ships; another is a module placed beside these (program.make_backend), as the VM sandbox places
its own behind `backend.PowerBackend` (start/stop node containers).
"""
