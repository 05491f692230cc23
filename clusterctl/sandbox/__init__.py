"""The local sandbox: the stack's nodes booted like cloud VMs on one Linux machine (`vm/`).

`cgroups` holds the cgroup v1 helpers the node containers and the lab server are placed with.
"""
