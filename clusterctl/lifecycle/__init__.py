"""`clusterctl up / status / down`: the Pulumi Automation API over the user's `pulumi` CLI.

workspace        find the project, the stack file and the CLI; open a Stack
stack_export     pure functions over `pulumi stack export` (protected, kept, created when)
capacity         what `up` asks the cloud first: sizes offered, quota
capacity_azure   Azure's answers for capacity (Resource SKUs, usages)
role_permission  may the signed-in identity create the power role
gate             the Pulumi program runs only after `up`'s checks, or with a reason to skip them
progress         engine events -> a rich progress line, plus the error diagnostics
errors           a failed Pulumi operation, shown without a CommandError dump
retry            backoff for the cloud's known transient dependency failures
survivors        ask the cloud for resources still tagged with the stack
kubeconfig       a Kubernetes stack's kubeconfig on disk
up, status, down  the three operations; cli/lifecycle.py wires them into typer
"""
