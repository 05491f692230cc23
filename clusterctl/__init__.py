"""clusterctl: provision, validate and tear down cloud GPU clusters."""

__version__ = "0.1.0"
