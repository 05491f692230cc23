"""ClusterSpec -> text: every file that lands on a node or in a cluster (jinja2 over templates/).
The only user of jinja2; pure functions, no Pulumi."""
