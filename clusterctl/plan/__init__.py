"""`clusterctl plan`: the real Pulumi program under Pulumi's mock engine, offline."""
