"""The plan layer: pure decisions taken from the typed args, and the checks across config sections.

Why a layer: "where does this workload run?", "which groups may a workload's tolerations reach?", "which
Kueue flavor holds this run?" are answered from the args alone, the same way at render, at `pulumi up` and in a
program that imports the components. Keeping them out of the ComponentResources makes them testable
without Pulumi and readable in one place. "What does this stack cost per hour?" (`cost`) is answered the
same pure way from plan.json's resources (plain dicts), so that any program's render is priced. The GPU
taint itself is a platform constant, `manifests.wellknown.GPU_TAINT`, that the schema's
`NodeGroupArgs.all_taints` adds to a GPU group; the plan reads it, it does not decide it.

May import: `components.config`, `components.facts`, `gpuplane.manifests`. Never the resources,
`components.destroy`, Pulumi or boto3 (import-linter contracts in `pyproject.toml`).
"""
