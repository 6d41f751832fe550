"""`gpuplane verify`: probes of a running cluster, driven from the user's machine (docs/verify.md).

The parts, one room each: `expect` (what the stack promises, from its config), `cluster` and `aws` (the
seams to the Kubernetes API and boto3, as protocols a test can fake), `model` (a check, its outcome, its
context), `pods` (a probe pod's life), `checks_*` (the checks, registered as factories so later issues add
theirs), `runner` (order, parallelism, deadlines, clean-up, Ctrl-C), `report` (table, JSON, HTML) and
`command` (the CLI).
"""
