"""Stack file -> validated ClusterSpec: the model, the catalog, the rules, and what follows from a
spec alone (addresses, topology, cost, tags, JSON Schema). Knows no jinja2 and no Pulumi."""
