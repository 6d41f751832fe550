"""Apply a plain-dict Kubernetes object (from `gpuplane.manifests`) as a resource of the Kubernetes provider.

Why typed resources and not a YAML ConfigGroup: a ConfigGroup is a remote component whose objects the
mock run (render, tests) never sees; a resource per object carries every field as inputs, so what render
writes is exactly what `pulumi up` applies.

Why one generic resource class and not pulumi_kubernetes's generated one per kind: the generated class does
three things, and this does the same three: it registers the kind's type token (`kubernetes:core/v1:ConfigMap`,
`kubernetes:apps/v1:Deployment`; a custom resource's is `kubernetes:<apiVersion>:<kind>`, as
`apiextensions.CustomResource` makes it), sends the object's fields under their API names, and asks for the
provider version of the installed pulumi_kubernetes. Our objects are already dicts with the API's names, so
the generated classes' Python argument trees add nothing, and importing them costs a render about a second
of CPU (`pulumi_kubernetes.core.v1` alone is half of it). The URNs are the same as with the generated classes,
so a stack that was created with them sees no change. What the generated classes add beyond that are aliases
from beta API versions (`extensions/v1beta1` Deployments and the like) that no gpuplane stack ever created.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

import pulumi

from gpuplane.manifests.wellknown import HELM_RELEASE

# The provider version a resource asks the engine for, as every generated pulumi_kubernetes class does: the
# plugin that matches the installed SDK.
_PROVIDER_VERSION: str = metadata.version("pulumi_kubernetes")


def type_token(api_version: str, kind: str) -> str:
    """The Pulumi type token of a Kubernetes kind: the core group is `core/v1`, any other group keeps its name."""
    if not api_version or not kind:
        raise ValueError(
            f"a Kubernetes object needs apiVersion and kind, got apiVersion={api_version!r}, kind={kind!r}"
        )
    group_version = f"core/{api_version}" if "/" not in api_version else api_version
    return f"kubernetes:{group_version}:{kind}"


class KubeObject(pulumi.CustomResource):
    """One Kubernetes object, registered under its kind's type token with its fields as they are in the API."""

    metadata: pulumi.Output[Any]

    def __init__(self, name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None) -> None:
        token = type_token(obj.get("apiVersion", ""), obj.get("kind", ""))
        merged = pulumi.ResourceOptions.merge(pulumi.ResourceOptions(version=_PROVIDER_VERSION), opts)
        super().__init__(token, name, dict(obj), merged)


def apply(name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions) -> KubeObject:
    """Register `obj` (a whole object: apiVersion, kind, metadata and its fields) under the Pulumi name `name`."""
    return KubeObject(name, obj, opts)


# How long the provider waits for a release's objects to be ready (its `timeout`, seconds; the provider's default
# is 300). A first `pulumi up` installs the releases while the cluster-autoscaler may still be adding the node their
# pods fit on (a system group at its minimum is full of add-ons): a launch, the node joining and its storage agent
# lifting the startup taint take several minutes, and a release that gives up at 5 minutes fails the whole `up`.
HELM_RELEASE_TIMEOUT_S: Final = 1200


class HelmRelease(pulumi.CustomResource):
    """A Helm release (`kubernetes:helm.sh/v3:Release`): the provider installs the chart and awaits its objects.

    The same registration as pulumi_kubernetes's `helm.v3.Release` for the arguments gpuplane passes, under the
    API's names, with the `compat` marker that class always sends; without importing its package, which also
    loads the deprecated `helm.v3.Chart` and its YAML machinery.
    """

    name: pulumi.Output[str]
    status: pulumi.Output[Any]

    def __init__(
        self,
        resource_name: str,
        *,
        name: pulumi.Input[str],
        namespace: pulumi.Input[str],
        chart: pulumi.Input[str],
        version: pulumi.Input[str],
        repo: pulumi.Input[str] | None = None,
        values: pulumi.Input[Mapping[str, Any]] | None = None,
        create_namespace: bool | None = None,
        timeout: int = HELM_RELEASE_TIMEOUT_S,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "chart": chart,
            "compat": "true",
            "createNamespace": create_namespace,
            "name": name,
            "namespace": namespace,
            "repositoryOpts": None if repo is None else {"repo": repo},
            "timeout": timeout,
            "values": values,
            "version": version,
            "status": None,
        }
        merged = pulumi.ResourceOptions.merge(pulumi.ResourceOptions(version=_PROVIDER_VERSION), opts)
        super().__init__(HELM_RELEASE, resource_name, props, merged)
