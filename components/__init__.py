"""Pulumi ComponentResources: the only code that imports Pulumi providers."""
