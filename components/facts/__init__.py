"""The facts layer: upstream facts and rules on plain values, the bottom of `components`.

What: EC2 instance types and their GPUs (`catalog`), AWS partitions and regions from botocore's bundled
endpoint data (`partition`), the subnet arithmetic of a VPC (`subnets`), Kubernetes' name limits
(`name_limits`). Why a layer: the schema validates fields against these facts and the plan decides with
them, so they must depend on neither.

May import: `gpuplane.manifests` and botocore's bundled models (read, never called over the network).
Never `components.config`, `components.plan`, the resources, Pulumi or boto3 clients.
"""
