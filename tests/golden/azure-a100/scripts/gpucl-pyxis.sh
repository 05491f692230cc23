#!/bin/bash
# gpucl-pyxis (run once by cloud-init on every role): build pyxis v0.24.0 against this node's
# Slurm (pyxis README: it must be compiled against the deployed release), then turn it on in the
# SPANK plugin stack. No plugstack line names pyxis until the plugin is installed, so sbatch and srun
# keep working (without container options) if the build fails; cloud-init reports the failure.
set -eu
lib=/usr/local/lib/slurm/spank_pyxis.so
src=/opt/pyxis
if [ ! -e "$lib" ]; then
  # once per cluster: the first node (or the scheduler) builds, the others install its build
  # The tag's commit is pinned (config/versions.yaml nodePackages.pyxis.gitCommit): a clone whose
  # HEAD differs (a moved or replaced tag) is refused before anything is built or installed.
  # A compiler only where this node builds: the HPC image has one, the scheduler's plain image
  # gets build-essential here, not at every boot of a scheduler that installs the cache's build.
  /usr/local/libexec/gpu-clusters/gpucl-build-cache.sh pyxis 107519944221822ea1dace4db8e7234b2eaa4cd5 "(command -v gcc && command -v make || DEBIAN_FRONTEND=noninteractive apt-get install -y -q build-essential) >/dev/null && rm -rf $src && git clone -q --depth 1 --branch v0.24.0 https://github.com/NVIDIA/pyxis.git $src && head=\$(git -C $src rev-parse HEAD) && if [ \"\$head\" != 107519944221822ea1dace4db8e7234b2eaa4cd5 ]; then echo \"gpu-clusters: REFUSED pyxis v0.24.0: the clone is commit \$head, not the pinned 107519944221822ea1dace4db8e7234b2eaa4cd5 (config/versions.yaml)\" >&2; exit 1; fi && make -C $src install prefix=/usr/local libdir=/usr/local/lib"
fi
# The scheduler's plugstack.conf is what configless nodes get from slurmctld: name pyxis there
# once, then have slurmctld hand the new file out. Nodes have no plugstack.conf of their own.
conf=/etc/slurm/plugstack.conf
if [ -e "$conf" ] && ! grep -qF "$lib" "$conf"; then
  cat >> "$conf" <<'CONF'
required /usr/local/lib/slurm/spank_pyxis.so runtime_path=/nvme/enroot/runtime
CONF
  if systemctl -q is-active slurmctld; then scontrol reconfigure; fi
fi
