"""gpuplane's generic Kubernetes resources register exactly what pulumi_kubernetes's generated classes register.

`kube_objects` replaces the generated class per kind (and `helm.v3.Release`) to keep their imports out of a
render. The engine and the Kubernetes provider see a resource only through its registration: the type token
(which makes the URN), the inputs under their API names, and the provider version asked for. So every object
the shipped stacks and an every-feature stack apply is registered twice under mocks, once through the generated
class with the object's fields as its keyword arguments (as gpuplane did before) and once through
`kube_objects`, and the two registrations are compared field by field.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from gpuplane.components import kube_objects
from gpuplane.infra import mockrun, render
from gpuplane.manifests import wellknown
from tests.components.test_least_privilege import FULL_STACKS
from tests.conftest import stack_config

_SKIP = {"pulumi:providers:kubernetes"}


def _generated_class(token: str) -> Any:
    """pulumi_kubernetes's class for a type token: `kubernetes:rbac.authorization.k8s.io/v1:ClusterRole` is
    `pulumi_kubernetes.rbac.v1.ClusterRole`; a custom resource's kind has no class of its own."""
    _, group_version, kind = token.split(":")
    group, version = group_version.split("/")
    try:
        module = importlib.import_module(f"pulumi_kubernetes.{group.split('.')[0]}.{version}")
    except ModuleNotFoundError:
        module = None
    return getattr(module, kind, None) if module else None


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def _register_generated(name: str, obj: dict[str, Any]) -> None:
    token = kube_objects.type_token(obj["apiVersion"], obj["kind"])
    cls = _generated_class(token)
    if cls is None:
        import pulumi_kubernetes as k8s  # noqa: PLC0415 - the comparison's other side, never the product's

        k8s.apiextensions.CustomResource(
            name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj.get("spec")
        )
        return
    cls(name, **{_snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")})


def _register_release_generated(name: str, inputs: dict[str, Any]) -> None:
    import pulumi_kubernetes as k8s  # noqa: PLC0415

    repo = (inputs.get("repositoryOpts") or {}).get("repo")
    k8s.helm.v3.Release(
        name,
        name=inputs["name"],
        namespace=inputs["namespace"],
        chart=inputs["chart"],
        version=inputs["version"],
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
        values=inputs.get("values"),
        create_namespace=inputs.get("createNamespace"),
        timeout=inputs["timeout"],
    )


def _register_release_ours(name: str, inputs: dict[str, Any]) -> None:
    kube_objects.HelmRelease(
        name,
        name=inputs["name"],
        namespace=inputs["namespace"],
        chart=inputs["chart"],
        version=inputs["version"],
        repo=(inputs.get("repositoryOpts") or {}).get("repo"),
        values=inputs.get("values"),
        create_namespace=inputs.get("createNamespace"),
        timeout=inputs["timeout"],
    )


def _registrations(objects: list[tuple[str, dict[str, Any]]], register: Callable[[str, dict[str, Any]], Any]) -> Any:
    def program() -> dict[str, Any]:
        for name, obj in objects:
            register(name, obj)
        return {}

    recording = mockrun.run(program, "p", "s", "us-west-2")
    return {r.name: (r.type, r.inputs) for r in recording.resources}


@pytest.fixture(scope="module", params=["dev", "prod", "full-amp"])
def kube_resources(request: pytest.FixtureRequest) -> list[mockrun.RecordedResource]:
    if request.param in ("dev", "prod"):
        recording: mockrun.Recording = request.getfixturevalue(f"{request.param}_run")
    else:
        recording = render.run_stack(stack_config(FULL_STACKS[request.param], stack=request.param))
    return [r for r in recording.resources if r.type.startswith("kubernetes:") and r.type not in _SKIP]


def test_every_object_registers_as_the_generated_class_does(kube_resources: list[mockrun.RecordedResource]) -> None:
    objects = [(r.name, r.inputs) for r in kube_resources if r.type != wellknown.HELM_RELEASE]
    assert len(objects) >= 10, "every stack applies its namespaces, claims and runtime objects"
    generated = _registrations(objects, _register_generated)
    ours = _registrations(objects, lambda name, obj: kube_objects.apply(name, obj, pulumi.ResourceOptions()))
    assert set(ours) == set(generated)
    for name in ours:
        assert ours[name] == generated[name], name


def test_every_release_registers_as_helm_v3_release_does(kube_resources: list[mockrun.RecordedResource]) -> None:
    releases = [(r.name, r.inputs) for r in kube_resources if r.type == wellknown.HELM_RELEASE]
    assert releases, "every stack installs charts"
    generated = _registrations(releases, _register_release_generated)
    ours = _registrations(releases, _register_release_ours)
    assert ours == generated


def test_the_provider_version_is_the_installed_sdks() -> None:
    from importlib.metadata import version  # noqa: PLC0415

    assert version("pulumi_kubernetes") == kube_objects._PROVIDER_VERSION


@pytest.mark.parametrize(
    ("api_version", "kind", "token"),
    [
        ("v1", "Namespace", "kubernetes:core/v1:Namespace"),
        ("apps/v1", "Deployment", "kubernetes:apps/v1:Deployment"),
        ("monitoring.coreos.com/v1", "PrometheusRule", "kubernetes:monitoring.coreos.com/v1:PrometheusRule"),
    ],
)
def test_type_tokens(api_version: str, kind: str, token: str) -> None:
    assert kube_objects.type_token(api_version, kind) == token


@pytest.mark.parametrize("obj", [{"kind": "ConfigMap"}, {"apiVersion": "v1"}, {"apiVersion": "", "kind": "X"}])
def test_an_object_without_api_version_or_kind_is_refused_by_name(obj: dict[str, Any]) -> None:
    def program() -> dict[str, Any]:
        kube_objects.apply("x", obj, pulumi.ResourceOptions())
        return {}

    with pytest.raises(ValueError, match="needs apiVersion and kind"):
        mockrun.run(program, "p", "s", "us-west-2")


def test_every_release_waits_past_a_node_the_autoscaler_adds(kube_resources: list[mockrun.RecordedResource]) -> None:
    # The provider's default (300 s) is shorter than a scale-up from a full system group: launch, join, taint lifted.
    releases = [r for r in kube_resources if r.type == wellknown.HELM_RELEASE]
    assert releases
    assert {r.inputs["timeout"] for r in releases} == {kube_objects.HELM_RELEASE_TIMEOUT_S} == {1200}
