"""The plan layer: pure decisions taken from the typed args, and the checks across config sections.

Why a layer: "where does this workload run?", "which taint does a GPU group get?", "which Kueue flavor
holds this run?" are answered from the args alone, the same way at render, at `pulumi up` and in a
program that imports the components. Keeping them out of the ComponentResources makes them testable
without Pulumi and readable in one place. "What does this stack cost per hour?" (`cost`) is answered the
same pure way from plan.json's resources (plain dicts), so that any program's render is priced.

May import: `components.config`, `components.facts`, `gpuplane.manifests`. Never the resources,
`components.destroy`, Pulumi or boto3 (import-linter contracts in `pyproject.toml`).
"""
