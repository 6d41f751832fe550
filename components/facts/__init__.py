"""The facts layer: upstream facts and rules on plain values, the bottom of `components`.

What: EC2 instance types and their GPUs, EFA and network cards, from the shipped `data/instance_types.json`
(`catalog`), on-demand prices from the dated `data/prices.json` (`prices`), AWS partitions and regions
from botocore's bundled endpoint data (`partition`), the subnet arithmetic of a VPC (`subnets`),
Kubernetes' name limits (`name_limits`), what IAM reads as a wildcard or a variable (`iam`). Why a layer:
the schema validates fields against these facts and the plan decides with them, so they must depend on neither.

May import: `gpuplane.manifests`, botocore's bundled models and the data files beside it (read, never called
over the network).
Never `components.config`, `components.plan`, the resources, Pulumi or boto3 clients.
"""
