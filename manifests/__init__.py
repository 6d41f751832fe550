"""Pure builders of Kubernetes objects (plain dicts) and the in-container runtime helper; no Pulumi."""
