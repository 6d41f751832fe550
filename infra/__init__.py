"""The Pulumi program, stack config loading, the offline renderer and the gpuplane CLI."""
