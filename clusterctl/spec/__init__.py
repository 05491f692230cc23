"""Stack file -> validated ClusterSpec: the model, the catalog, the rules, and what follows from a
spec alone (addresses, topology, cost, tags, JSON Schema). Knows no jinja2 and no Pulumi.

  stackfile           read a stack file and apply `--set` overrides
  model               the frozen pydantic model of `gpu-clusters:cluster`
  load                raw mapping -> ClusterSpec, or one line per problem
  catalog             config/*.yaml: SKUs, images, NCCL profiles, versions
  images              what each VM role boots (URN or gallery image), pinned or not
  defaults            what the spec leaves open (head node and jump host sizes)
  rules               cross-field rules over a valid spec
  rules_input         values the cloud or Slurm would reject, refused at plan time
  rules_aws           what the EKS VPC can hold
  rules_k8s           Kubernetes GPU cluster preflight (EFA, InfiniBand)
  rules_team          the team: users, accounts, QoS, login nodes
  rules_sharing       shared GPUs: MIG layouts and shards
  mig                 MIG placement: whether a layout fits one GPU, instance IDs
  stack_edit          edits of a stack file that keep its comments (`users add/remove`)
  provider_config     the stack's provider settings against the cluster's own
  update_policy       what each edit of a deployed stack does
  addressing          the address plan
  topology            GPU nodes grouped into scale sets, and their names
  power               Slurm power saving from the spec
  efa                 the EFA interface layout of a multi-card instance
  kubernetes          what a Kubernetes GPU cluster gets on top of its cloud
  kubernetes_addons   the pinned Helm releases
  lustre              the shared Lustre file system: sizes, ports, claim name
  cost                price per hour at catalog prices
  tags                the tags every resource carries
  schema              JSON Schema of the cluster object
"""
