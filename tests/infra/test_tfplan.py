"""`tfplan.json`: the AWS side of a render as a Terraform plan that checkov's plan parser reads with its graph.

The scan itself (checkov on both stacks, with `.checkov/aws-skips.yaml`) runs here when `.venv-checkov`
exists (`make scan` builds it; CI has it), and is skipped with that reason otherwise.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.infra import config as stack_config
from gpuplane.infra import render, tfplan
from gpuplane.infra.cli import app
from tests import checkov_scan
from tests.conftest import once_per_session

ROOT = Path(__file__).resolve().parents[2]
SKIPS = ROOT / ".checkov" / "aws-skips.yaml"
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"


@pytest.fixture(scope="module", params=["dev", "prod"])
def rendered(request) -> tuple[str, dict[str, Any], dict[str, Any]]:
    config = stack_config.load(request.param)
    recording = request.getfixturevalue(f"{request.param}_run")  # the session's render of the stack
    plan = render.plan_document(config, recording)
    return request.param, plan, tfplan.from_recording(plan, recording)


def by_address(doc: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    resources = doc[section]["root_module"]["resources"] if section != "resource_changes" else doc[section]
    return {r["address"]: r for r in resources}


def one(doc: dict[str, Any], tf_type: str) -> dict[str, Any]:
    found = [r for r in doc["planned_values"]["root_module"]["resources"] if r["type"] == tf_type]
    assert len(found) == 1, [r["address"] for r in found]
    return found[0]


def expressions(doc: dict[str, Any], address: str) -> dict[str, Any]:
    return by_address(doc, "configuration")[address]["expressions"]


def test_every_aws_resource_is_converted_with_its_terraform_type(rendered):
    _, plan, doc = rendered
    table = tfplan.mapping()["resources"]
    aws = [r for r in plan["resources"] if r["custom"] and r["type"].startswith("aws:")]
    planned = doc["planned_values"]["root_module"]["resources"]
    assert sorted(r["type"] for r in planned) == sorted(table[r["type"]] for r in aws)
    assert doc["format_version"].startswith("1.")
    assert {r["mode"] for r in planned} == {"managed"}
    assert {tuple(c["change"]["actions"]) for c in doc["resource_changes"]} == {("create",)}
    assert by_address(doc, "planned_values").keys() == by_address(doc, "resource_changes").keys()
    assert by_address(doc, "planned_values").keys() == by_address(doc, "configuration").keys()


@pytest.mark.parametrize(
    ("tf_type", "attribute", "expected"),
    [
        ("aws_vpc", "enable_dns_hostnames", True),
        ("aws_vpc", "cidr_block", "10.0.0.0/16"),
        ("aws_eks_cluster", "enabled_cluster_log_types", None),  # value differs per stack: present is enough
        ("aws_iam_openid_connect_provider", "client_id_list", ["sts.amazonaws.com"]),
    ],
)
def test_attribute_names_are_terraform_names(rendered, tf_type, attribute, expected):
    _, _, doc = rendered
    values = one(doc, tf_type)["values"]
    assert attribute in values
    if expected is not None:
        assert values[attribute] == expected
    assert not any(k[0].isupper() or any(c.isupper() for c in k) for k in values if k not in ("tags",))


def test_nested_blocks_are_lists_and_maps_stay_maps(rendered):
    _, _, doc = rendered
    cluster = one(doc, "aws_eks_cluster")["values"]
    assert isinstance(cluster["vpc_config"], list) and len(cluster["vpc_config"]) == 1
    assert cluster["vpc_config"][0]["endpoint_private_access"] is True
    assert cluster["encryption_config"][0]["resources"] == ["secrets"]
    assert isinstance(cluster["tags"], dict) and cluster["tags"]["gpuplane:project"] == "gpuplane"
    groups = [
        r["values"] for r in doc["planned_values"]["root_module"]["resources"] if r["type"] == "aws_eks_node_group"
    ]
    gpu = next(g for g in groups if g["labels"].get("nvidia.com/gpu.present") == "true")
    assert {"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "true"} in gpu["taint"]  # renamed property
    assert "taints" not in gpu
    assert gpu["scaling_config"][0]["min_size"] >= 0


def test_policies_are_json_strings(rendered):
    _, _, doc = rendered
    for r in doc["planned_values"]["root_module"]["resources"]:
        for key in ("policy", "assume_role_policy"):
            if key in r["values"]:
                assert isinstance(r["values"][key], str), r["address"]
                assert json.loads(r["values"][key])["Version"] == "2012-10-17"


def test_unknown_values_are_null_and_expressed_as_references(rendered):
    stack, _, doc = rendered
    nat = next(r for r in doc["planned_values"]["root_module"]["resources"] if r["type"] == "aws_nat_gateway")
    assert "allocation_id" not in nat["values"] and "subnet_id" not in nat["values"]
    exprs = expressions(doc, nat["address"])
    assert exprs["allocation_id"]["references"][0].startswith("aws_eip.")
    assert exprs["allocation_id"]["references"][0].endswith(".id")
    assert exprs["subnet_id"]["references"][0].startswith(f"aws_subnet.gpuplane_{stack}_network_public_")
    change = by_address(doc, "resource_changes")[nat["address"]]["change"]
    assert change["after_unknown"] == {"allocation_id": True, "subnet_id": True}
    # A known value that names another resource keeps its value and carries the reference too.
    group = next(r for r in doc["planned_values"]["root_module"]["resources"] if r["type"] == "aws_eks_node_group")
    assert group["values"]["cluster_name"] == f"gpuplane-{stack}"
    assert expressions(doc, group["address"])["cluster_name"]["references"][0].startswith("aws_eks_cluster.")
    # Nested: the cluster's subnets and the KMS key ARN inside blocks.
    cluster = one(doc, "aws_eks_cluster")
    cexpr = expressions(doc, cluster["address"])
    assert cexpr["encryption_config"][0]["provider"][0]["key_arn"]["references"][0].endswith(".arn")
    assert all(r.startswith("aws_subnet.") for r in cexpr["vpc_config"][0]["subnet_ids"]["references"][::2])


def test_a_string_built_from_an_unknown_keeps_its_value_and_references(rendered):
    _, _, doc = rendered
    policy = one(doc, "aws_efs_file_system_policy")
    assert "Statement" in json.loads(policy["values"]["policy"])
    assert any(
        r.startswith("aws_efs_file_system.") for r in expressions(doc, policy["address"])["policy"]["references"]
    )


def test_output_is_deterministic(rendered):
    stack, _, doc = rendered
    config = stack_config.load(stack)
    recording = render.run_stack(config)
    assert tfplan.dumps(tfplan.from_recording(render.plan_document(config, recording), recording)) == tfplan.dumps(doc)


def test_an_unmapped_aws_type_is_reported_not_dropped(rendered):
    _, plan, _ = rendered
    odd = {**plan["resources"][0], "urn": "urn:x", "custom": True, "type": "aws:made/up:Thing"}
    odd2 = {**odd, "urn": "urn:y", "type": "aws:other/up:Thing"}
    with pytest.raises(tfplan.UnmappedTypeError) as err:
        tfplan.convert({**plan, "resources": [*plan["resources"], odd, odd2]})
    assert err.value.types == ["aws:made/up:Thing", "aws:other/up:Thing"]
    assert "aws:made/up:Thing" in str(err.value) and "tfplan_map.json" in str(err.value)


def test_only_aws_resources_are_converted(rendered):
    _, plan, doc = rendered
    non_aws = [r for r in plan["resources"] if not r["type"].startswith("aws:")]
    assert non_aws  # kubernetes objects, components, providers exist in the plan ...
    assert all(r["type"].startswith("aws_") for r in doc["planned_values"]["root_module"]["resources"])


@pytest.mark.parametrize(
    ("pulumi", "terraform"),
    [
        ("serviceIpv4Cidr", "service_ipv4_cidr"),
        ("httpPutResponseHopLimit", "http_put_response_hop_limit"),
        ("vpcId", "vpc_id"),
    ],
)
def test_snake_case(pulumi, terraform):
    assert tfplan.snake(pulumi) == terraform


# --- the skip file ------------------------------------------------------------------------------------


def test_every_skip_has_kind_stacks_and_a_reason():
    entries = tfplan.aws_skips(SKIPS.read_text())
    assert entries
    for e in entries:
        assert set(e["stacks"]) <= {"dev", "prod"}, e
        assert len(e["reason"].split()) >= 5, e
    assert len({e["check"] for e in entries}) == len(entries), "one entry per check"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("skips:\n  - {check: CKV_AWS_39, stacks: [dev], kind: design}\n", "exactly the keys"),
        ("skips:\n  - {check: CKV_AWS_39, stacks: [dev], kind: design, reason: ''}\n", "reason"),
        ("skips:\n  - {check: CKV_AWS_39, stacks: [dev], kind: maybe, reason: a b c d e}\n", "kind"),
        ("skips:\n  - {check: CKV_K8S_1, stacks: [dev], kind: design, reason: a b c d e}\n", "check"),
        ("skips:\n  - {check: CKV_AWS_39, stacks: [], kind: design, reason: a b c d e}\n", "stacks"),
    ],
)
def test_bad_skip_entries_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        tfplan.aws_skips(text)


@pytest.fixture(scope="module")
def checkov_plans(request, tmp_path_factory) -> dict[str, checkov_scan.SetResult]:
    """Both stacks' tfplan.json in one checkov run for the session, no skips (each test compares with its own)."""

    def plan_text(stack: str) -> str:
        recording = request.getfixturevalue(f"{stack}_run")
        return tfplan.dumps(tfplan.from_recording(render.plan_document(stack_config.load(stack), recording), recording))

    return once_per_session(
        tmp_path_factory,
        "checkov-plans",
        lambda: checkov_scan.scan_plans(
            tmp_path_factory.mktemp("checkov-plans"), {stack: partial(plan_text, stack) for stack in ("dev", "prod")}
        ),
    )


@pytest.mark.skipif(not CHECKOV.exists(), reason="checkov's venv .venv-checkov is missing: `make scan` builds it")
def test_checkov_fails_exactly_the_skipped_checks(rendered, checkov_plans):
    """Every failure is in the skip file for this stack, and every skip for this stack still fails."""
    stack = rendered[0]  # its plan, from the same session recording as `rendered`'s
    result = checkov_plans[stack]
    assert result.parsing_errors == []
    failed = result.failed_ids
    skipped = set(tfplan.skip_checks(SKIPS.read_text(), stack))
    assert failed - skipped == set(), f"{stack}: new failures not in .checkov/aws-skips.yaml"
    assert skipped - failed == set(), f"{stack}: skips for checks that pass; remove them"
    assert result.passed > 100


# --- the same plan read by a Rego (OPA) policy --------------------------------------------------------

# A value only the cloud knows (a key's ARN) is absent from planned_values, as in a Terraform plan: a
# policy must accept a reference to a KMS key in `configuration` as "encrypted", or it flags every log group.
_REGO = """package gpuplane
encrypted_by_reference contains r.address if {
  some r in input.configuration.root_module.resources
  r.type == "aws_cloudwatch_log_group"
  some ref in r.expressions.kms_key_id.references
  startswith(ref, "aws_kms_key.")
}
unencrypted contains r.address if {
  some r in input.planned_values.root_module.resources
  r.type == "aws_cloudwatch_log_group"
  not r.values.kms_key_id
  not encrypted_by_reference[r.address]
}
"""


def _rego_unencrypted(doc: dict[str, Any]) -> list[str]:
    regopy = pytest.importorskip("regopy", reason="regopy (dev dependency) is not installed")
    rego = regopy.Interpreter()
    rego.set_input(doc)
    rego.add_module("gpuplane", _REGO)
    result = json.loads(str(rego.query("x := data.gpuplane.unencrypted")))
    found: list[str] = result["bindings"]["x"]
    return found


def test_a_rego_policy_reads_the_plan_and_its_references(rendered):
    _, _, doc = rendered
    assert _rego_unencrypted(doc) == []
    # Drop the key reference of one log group: the same policy now reports it.
    stripped = json.loads(tfplan.dumps(doc))
    group = next(
        r for r in stripped["configuration"]["root_module"]["resources"] if r["type"] == "aws_cloudwatch_log_group"
    )
    del group["expressions"]["kms_key_id"]
    assert _rego_unencrypted(stripped) == [group["address"]]


def test_references_into_nested_outputs_use_terraform_names(rendered):
    """The OIDC provider's URL is the cluster's `identity[0].oidc[0].issuer` (Pulumi: identities/oidcs)."""
    _, _, doc = rendered
    oidc = one(doc, "aws_iam_openid_connect_provider")
    assert "url" not in oidc["values"]
    refs = expressions(doc, oidc["address"])["url"]["references"]
    cluster = one(doc, "aws_eks_cluster")["address"]
    assert refs[0] == f"{cluster}.identity[0].oidc[0].issuer"
    assert refs[-1] == cluster


def test_render_refuses_an_unmapped_type_and_writes_nothing(tmp_path, monkeypatch):
    table = {**tfplan.mapping(), "resources": dict(tfplan.mapping()["resources"])}
    del table["resources"]["aws:efs/fileSystem:FileSystem"]
    monkeypatch.setattr(tfplan, "mapping", lambda: table)
    out = tmp_path / "dev"
    result = CliRunner().invoke(app, ["render", "dev", "--out", str(out)])
    assert result.exit_code == 1
    assert "aws:efs/fileSystem:FileSystem" in result.output and "Traceback" not in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []
