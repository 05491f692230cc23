"""`clusterctl up / status / down`: the Pulumi Automation API over the user's `pulumi` CLI.

workspace: find the project, the stack file and the CLI; open a Stack.
state: pure functions over `pulumi stack export` (what is protected, kept, created when).
progress: engine events -> a rich progress line, plus the error diagnostics.
retry: backoff for the cloud's known transient dependency failures.
survivors: ask the cloud for resources still tagged with the stack.
up, status, down: the three operations; cli_lifecycle.py wires them into typer.
"""
