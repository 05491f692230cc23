"""Names vulture (pyproject [tool.vulture]) reports as unused that are used where it cannot see:
each group says by what. Anything else it reports is dead: remove it. Not imported by anything."""

# ruff: noqa

# rich reads Table.caption
_.caption  # unused attribute (clusterctl/cli/report.py:37)

# the state file's phase: written for whoever reads state.json
_.phase  # unused attribute (clusterctl/sandbox/vm/boot.py:171)
phase  # unused variable (clusterctl/sandbox/vm/vmstate.py:37)

# http.server's handler and server hooks
_.daemon_threads  # unused attribute (clusterctl/sandbox/vm/labserver.py:285)
_.daemon_threads  # unused attribute (clusterctl/sandbox/vm/labserver.py:313)
_.log_message  # unused method (clusterctl/sandbox/vm/labserver.py:220)
_.do_POST  # unused method (clusterctl/sandbox/vm/labserver.py:230)
_.log_message  # unused method (clusterctl/sandbox/vm/labserver.py:48)
_.do_POST  # unused method (clusterctl/sandbox/vm/labserver.py:62)
server_version  # unused variable (clusterctl/sandbox/vm/labserver.py:217)
server_version  # unused variable (clusterctl/sandbox/vm/labserver.py:44)

# Pulumi components: kept references to child resources; the cluster classes are looked up by name (clusterctl/clouds/<cloud>.py `clusters`)
_.ingress  # unused attribute (components/aws/efa_security_group.py:27)
_.egress  # unused attribute (components/aws/efa_security_group.py:36)
_.dns_group  # unused attribute (components/azure/slurm/files_share.py:113)
_.assignments  # unused attribute (components/azure/slurm/power_role.py:81)
_.config_sync  # unused attribute (components/azure/slurm/slurm_cluster.py:107)
_.team_sync  # unused attribute (components/azure/slurm/slurm_cluster.py)
_.entra_extension  # unused attribute (components/azure/slurm/login_node.py)
_.entra_role  # unused attribute (components/azure/slurm/login_node.py)
_.power_role  # unused attribute (components/azure/slurm/slurm_cluster.py:98)
_.manifests  # unused attribute (components/k8s/gpu_addons.py:77)
_.assignment  # unused attribute (components/azure/aks/aks_admin.py:52)
_.maintenance  # unused attribute (components/azure/aks/aks_cluster.py:61)
_.schedules  # unused attribute (components/azure/aks/aks_maintenance.py:45)
_.association  # unused attribute (components/aws/cluster_autoscaler.py:85)
_.autoscaler_tags  # unused attribute (components/aws/gpu_node_group.py:124)
EksGpuCluster  # unused class (components/aws/eks_cluster.py:35)
AksGpuCluster  # unused class (components/azure/aks/aks_cluster.py:28)
AzureSlurmCluster  # unused class (components/azure/slurm/slurm_cluster.py:31)

# TypedDict keys and classes: the stack outputs' contract, written by components as dict literals and checked key by key (key_type) by tests/unit/test_outputs_contract.py
EksClusterOutputs  # unused class (clusterctl/outputs.py:154)
AksClusterOutputs  # unused class (clusterctl/outputs.py:169)
key_type  # unused function (clusterctl/outputs.py:311)
configMap  # unused variable (clusterctl/outputs.py:109)
mountPath  # unused variable (clusterctl/outputs.py:110)
slotsPerWorker  # unused variable (clusterctl/outputs.py:120)
allReducePerf  # unused variable (clusterctl/outputs.py:122)
capabilities  # unused variable (clusterctl/outputs.py:124)
nodeSelector  # unused variable (clusterctl/outputs.py:126)
tolerations  # unused variable (clusterctl/outputs.py:127)
mpiJobApiVersion  # unused variable (clusterctl/outputs.py:130)
mpirun  # unused variable (clusterctl/outputs.py:131)
forwardEnv  # unused variable (clusterctl/outputs.py:133)
shmSize  # unused variable (clusterctl/outputs.py:135)
kubernetesVersion  # unused variable (clusterctl/outputs.py:144)
addonVersions  # unused variable (clusterctl/outputs.py:145)
ncclLauncher  # unused variable (clusterctl/outputs.py:146)
subnetId  # unused variable (clusterctl/outputs.py:150)
placementGroup  # unused variable (clusterctl/outputs.py:151)
eksClusterName  # unused variable (clusterctl/outputs.py:155)
clusterEndpoint  # unused variable (clusterctl/outputs.py:156)
vpcId  # unused variable (clusterctl/outputs.py:158)
gpuNodeGroups  # unused variable (clusterctl/outputs.py:159)
agentPoolName  # unused variable (clusterctl/outputs.py:163)
vmSize  # unused variable (clusterctl/outputs.py:164)
gpuDriver  # unused variable (clusterctl/outputs.py:166)
agentPoolNames  # unused variable (clusterctl/outputs.py:170)
resourceGroupName  # unused variable (clusterctl/outputs.py:170)
aksClusterName  # unused variable (clusterctl/outputs.py:171)
gpuNodePools  # unused variable (clusterctl/outputs.py:172)
clusterName  # unused variable (clusterctl/outputs.py:76)
costPerHourUsd  # unused variable (clusterctl/outputs.py:79)
drainPrefix  # unused variable (clusterctl/outputs.py:80)
gpusPerNode  # unused variable (clusterctl/outputs.py:87)
scaleSets  # unused variable (clusterctl/outputs.py:88)
resourceGroupName  # unused variable (clusterctl/outputs.py:92)
schedulerHost  # unused variable (clusterctl/outputs.py:93)
schedulerAddress  # unused variable (clusterctl/outputs.py:94)
adminUser  # unused variable (clusterctl/outputs.py:95)
sshCommand  # unused variable (clusterctl/outputs.py:96)
jumpHostAddress  # unused variable (clusterctl/outputs.py:98)
sshPrivateKey  # unused variable (clusterctl/outputs.py:99)
egressAddress  # unused variable (clusterctl/outputs.py:101)
loginAddresses  # unused variable (clusterctl/outputs.py)

# typer commands and callbacks: typer calls them (registered by decorator)
_version_command  # unused function (clusterctl/cli/__init__.py)
_root  # unused function (clusterctl/cli/__init__.py:52)
old_spelling  # unused function (clusterctl/cli/sandbox.py:27)
status_cmd  # unused function (clusterctl/cli/sandbox_vm.py:103)
exec_cmd  # unused function (clusterctl/cli/sandbox_vm.py:117)
reboot_cmd  # unused function (clusterctl/cli/sandbox_vm.py:161)
unselect  # unused function (clusterctl/cli/selection.py)
fault_cmd  # unused function (clusterctl/cli/sandbox_vm.py:189)
down_cmd  # unused function (clusterctl/cli/sandbox_vm.py:218)
up_cmd  # unused function (clusterctl/cli/sandbox_vm.py:37)
add_cmd  # unused function (clusterctl/cli/users.py)
remove_cmd  # unused function (clusterctl/cli/users.py)
sync_cmd  # unused function (clusterctl/cli/users.py)
list_cmd  # unused function (clusterctl/cli/users.py)
notebook_cmd  # unused function (clusterctl/cli/notebook.py)

# cloud-init's datasource hook (a file the sandbox places on its nodes)
get_datasource_list  # unused function (clusterctl/sandbox/vm/files/resource-disk/usr/lib/python3/dist-packages/DataSourceNoCloudAzureResourceDisk.py:46)

# Pulumi's Mocks interface (new_resource, call) and what its Invocation records; by_type is the tests' query
_.new_resource  # unused method (clusterctl/plan/mockengine.py:120)
_.call  # unused method (clusterctl/plan/mockengine.py:125)
_.by_type  # unused method (clusterctl/plan/mockengine.py:59)
secret_paths  # unused variable (clusterctl/plan/mockengine.py:33)
depends_on  # unused variable (clusterctl/plan/mockengine.py:39)

# an action: main() dispatches by name (getattr)
_.suspend  # unused method (clusterctl/power/program.py:159)

# pydantic reads model_config and runs the validators; the catalog's sourced fields are data
_._resource_disk_sourced  # unused method (clusterctl/spec/catalog.py:164)
_._gpu_sizes_have_a_shape  # unused method (clusterctl/spec/catalog.py:170)
_._gdr_floor_sourced  # unused method (clusterctl/spec/catalog.py:58)
_._nccl_proof  # pydantic model validator (clusterctl/spec/catalog.py Fabric)
_._levels_in_order  # pydantic model validator (clusterctl/spec/catalog.py Baseline)
_._placements_inside  # pydantic model validator (clusterctl/spec/catalog.py MigGpu)
_.levels_note  # catalog field: the reasoning next to the warn/fail lines, read by people
_._curve_positive  # unused method (clusterctl/spec/catalog.py:80)
_._one_rate  # unused method (clusterctl/spec/catalog.py:119)
gen2_only  # unused variable (clusterctl/spec/catalog.py:155)
model_config  # unused variable (clusterctl/spec/catalog.py:32)
generation  # unused variable (clusterctl/spec/catalog.py:49)
model_config  # unused variable (clusterctl/spec/model.py:36)

# facts parsed from an nccl-tests log, kept on the run for reports and tests
_.gpu_names  # unused property (clusterctl/nccl/model.py:95)
time_label  # unused variable (clusterctl/nccl/model.py:71)
side_columns  # unused variable (clusterctl/nccl/model.py:72)
avg_busbw_gbps  # unused variable (clusterctl/nccl/model.py:75)
avg_busbw_failed  # unused variable (clusterctl/nccl/model.py:76)
tests_version  # unused variable (clusterctl/nccl/model.py:78)
nccl_version  # unused variable (clusterctl/nccl/model.py:79)
n_threads  # unused variable (clusterctl/nccl/model.py:80)
n_gpus  # unused variable (clusterctl/nccl/model.py:81)

# read by tests/unit/spec/test_efa_layout.py
_.is_efa  # unused property (clusterctl/spec/efa.py:27)

# read by templates/slurm/slurm.conf.j2
_.exc_nodes  # unused property (clusterctl/spec/power.py:43)

# Enum members: typer offers them as the SHELL choices
bash  # unused variable (clusterctl/cli/completion.py:19)
zsh  # unused variable (clusterctl/cli/completion.py:20)
fish  # unused variable (clusterctl/cli/completion.py:21)
powershell  # unused variable (clusterctl/cli/completion.py:22)
pwsh  # unused variable (clusterctl/cli/completion.py:23)

# HostTool.essential: read by tests/cli/test_doctor.py (the apt line leaves Essential packages out)
essential  # unused variable (clusterctl/cli/doctor.py:28)

# read by the Slurm templates (templates/slurm/*.j2)
controller_host  # unused variable (clusterctl/render/site.py:16)
slurm_user  # unused variable (clusterctl/render/site.py:18)
run_dir  # unused variable (clusterctl/render/site.py:25)
health_check_program  # unused variable (clusterctl/render/site.py:26)
health_check_interval_s  # unused variable (clusterctl/render/site.py:27)
slurmd_port  # unused variable (clusterctl/render/site.py:31)
cgroup_plugin  # unused variable (clusterctl/render/site.py:32)
proctrack  # unused variable (clusterctl/render/site.py:33)
task_plugins  # unused variable (clusterctl/render/site.py:34)

# ruamel.yaml's YAML object reads it when dumping (quotes as the user wrote them)
_.preserve_quotes  # unused attribute (clusterctl/spec/stack_edit.py)

# the Pulumi program (__main__.py, outside vulture's paths) calls the preflight gate
bare_run_refusal  # unused function (clusterctl/lifecycle/gate.py)
skipped_reason  # unused function (clusterctl/lifecycle/gate.py)

# the DOWN-billing record's keys (clusterctl/power/down_billing.py): built as TypedDict keyword
# arguments and read by key in the CLI and the tests
usdPerHour  # unused variable (clusterctl/power/down_billing.py)
deallocateSent  # unused variable (clusterctl/power/down_billing.py)
checkedAt  # unused variable (clusterctl/power/down_billing.py)
