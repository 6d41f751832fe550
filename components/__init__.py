"""Pulumi ComponentResources of gpuplane: one concern per module (network, cluster, node groups, ...)."""
