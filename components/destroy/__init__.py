"""Code that runs at `pulumi destroy`: the teardown hooks that remove what Kubernetes made behind Pulumi.

Why apart: it is the only boto3 code in `components`, it runs when resources are deleted (not when they
are planned), and a reader looking for what `pulumi up` creates should not have to read it.

May import: `components.plan`, `components.config`, `components.facts`, boto3 and Pulumi (for the hook
registration). Never the ComponentResources, which import it.
"""
