"""gpuplane's components: the Pulumi ComponentResources, and below them the layers they are built from.

What is where (each folder's docstring says more), from the top layer down; a layer imports only the
layers below it (import-linter contracts in `pyproject.toml`, run by `make lint`):
- this folder's modules: the ComponentResources (network, cluster, node_group, storage, gpu, autoscaler,
  queue, serving, training, workspace, platform) and their small Pulumi helpers (pod_identity, kms,
  flow_logs, kube_objects). They register resources; they decide nothing they could ask `plan` for.
- `destroy/`: boto3 code that runs at `pulumi destroy` (teardown hooks), not at `pulumi up`.
- `plan/`: pure decisions that take the args (where a workload goes, what a GPU group offers, the queue's
  flavors, the checks across config sections). No Pulumi, no boto3.
- `config/`: the schema, every Args class with its field-level validation. No Pulumi, no boto3.
- `facts/`: upstream facts and rules on plain values (instance types, partitions, subnet arithmetic,
  Kubernetes name limits). No Pulumi, no boto3 clients, no I/O beyond botocore's bundled models.
All layers may import `gpuplane.manifests`; none imports `gpuplane.infra`.
"""
