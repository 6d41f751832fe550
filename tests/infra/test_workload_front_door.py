"""The workload front door: each problem refused by `gpuplane render` with exit 2, its key, its limit, nothing written.

Each case renders a stack file through the CLI, the way a user meets it; each boundary has a value that
passes and one that fails.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpuplane.infra.cli import app

runner = CliRunner()

G5 = [
    {"name": "system", "instanceTypes": ["m6i.large"]},
    {"name": "gpu", "kind": "gpu", "instanceTypes": ["g5.xlarge"], "minSize": 0},
]
CPU = {"name": "cpu", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}
GPU = {"name": "gpu", "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1}}
SERVING = {"name": "resnet", "model": {"name": "resnet"}, "variants": [CPU]}
TRAINING: dict[str, Any] = {
    "name": "mnist",
    "strategy": "parameterServer",
    "command": ["python", "/data/train.py"],
    "chief": {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "worker": {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
    "ps": {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
}


def stack_text(**keys: Any) -> str:
    """A stack file with the given `gpuplane:` keys (as JSON, which YAML reads as flow style)."""
    config = {"aws:region": "us-west-2", "gpuplane:cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}}
    config |= {f"gpuplane:{k}": v for k, v in keys.items()}
    return "config:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in config.items())


def render(tmp_path: Path, text: str, stack: str = "dev") -> tuple[int, str, Path]:
    stacks = tmp_path / "stacks"
    stacks.mkdir(parents=True, exist_ok=True)
    (stacks / f"Pulumi.{stack}.yaml").write_text(text)
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", stack, "--out", str(out), "--stacks-dir", str(stacks)])
    return result.exit_code, " ".join(result.output.split()), out


def refused(tmp_path: Path, text: str, *fragments: str, stack: str = "dev") -> str:
    """Assert the render is refused naming every fragment, with nothing written; the flat output."""
    code, output, out = render(tmp_path, text, stack)
    assert code == 2, output
    for fragment in fragments:
        assert fragment in output, (fragment, output)
    assert "Traceback" not in output
    assert not out.exists()
    return output


def accepted(tmp_path: Path, text: str, stack: str = "dev") -> None:
    code, output, out = render(tmp_path, text, stack)
    assert code == 0, output
    assert (out / "plan.json").is_file()


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(base), **changes}


def serving(*variants: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(SERVING), "variants": list(variants) or [CPU], **changes}


# --- 3. placement problems name the key that is wrong, and the best group's value --------------------


def test_compute_capability_no_group_has_names_min_compute_capability(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(CPU, variant(GPU, minComputeCapability="8.7"))])
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[1].minComputeCapability:",
        "GPU compute capability >= 8.7; groups have 8.6 (gpu)",
    )


def test_compute_capability_the_best_group_has_passes(tmp_path):
    accepted(tmp_path, stack_text(nodeGroups=G5, serving=[serving(variant(GPU, minComputeCapability="8.6"))]))


def test_best_group_is_named_first():
    """A program building the args by hand gets the checks across sections from the plan layer (and Platform)."""
    from gpuplane.components.config import PlatformArgs  # noqa: PLC0415
    from gpuplane.components.plan.cross_checks import check_platform  # noqa: PLC0415

    groups = [*G5, {"name": "t4", "kind": "gpu", "instanceTypes": ["g4dn.xlarge"], "minSize": 0}]
    args = PlatformArgs.model_validate(
        {
            "cluster": {"publicAccessCidrs": ["198.51.100.7/32"]},
            "nodeGroups": groups,
            "serving": [serving(variant(GPU, minComputeCapability="9.0"))],
        }
    )
    with pytest.raises(ValueError, match=r"groups have 8\.6 \(gpu\), 7\.5 \(t4\)"):
        check_platform(args)


def test_training_compute_capability_is_the_workloads_key_said_once(tmp_path):
    gpu_role = {"replicas": 2, "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "gpus": 1}}
    training = {**TRAINING, "minComputeCapability": "9.0", "worker": gpu_role, "chief": {**gpu_role, "replicas": 1}}
    output = refused(
        tmp_path,
        stack_text(nodeGroups=G5, training=[training]),
        "gpuplane:training[0].minComputeCapability:",
        "groups have 8.6 (gpu)",
    )
    assert output.count("training[0].minComputeCapability:") == 1


def test_a_node_group_typo_is_reported_at_node_groups(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(variant(GPU, nodeGroups=["gpus"]))])
    refused(tmp_path, text, "gpuplane:serving[0].variants[0].nodeGroups:", "['gpus'] do not exist")


def test_naming_a_group_of_the_wrong_kind_is_reported_at_node_groups(tmp_path):
    text = stack_text(nodeGroups=G5, serving=[serving(variant(GPU, nodeGroups=["system"]))])
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[0].nodeGroups:",
        "none of the groups it names has a gpu group",
        "groups that have it: ['gpu']",
    )


def test_more_gpus_than_a_node_has_is_reported_at_resources_gpus(tmp_path):
    two = variant(GPU, resources={"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 2})
    refused(
        tmp_path,
        stack_text(nodeGroups=G5, serving=[serving(two)]),
        "gpuplane:serving[0].variants[0].resources.gpus:",
        "largest it could have had: g5.xlarge",
    )
    accepted(tmp_path / "ok", stack_text(nodeGroups=G5, serving=[serving(GPU)]))


def test_memory_over_every_node_is_reported_at_the_memory_key(tmp_path):
    big = variant(CPU, resources={"requests": {"memory": "7Gi"}, "limits": {"cpu": "1", "memory": "7Gi"}})
    refused(
        tmp_path,
        stack_text(nodeGroups=G5, serving=[serving(big)]),
        "gpuplane:serving[0].variants[0].resources.requests.memory:",
        "m6i.large (1.68 CPU, 6.1 GiB",
    )


def test_cpu_and_memory_that_fit_apart_but_never_together_are_reported_at_resources(tmp_path):
    groups = [
        {"name": "system", "instanceTypes": ["c6i.2xlarge"]},
        {"name": "mem", "instanceTypes": ["r6i.xlarge"]},
    ]
    both = variant(CPU, resources={"limits": {"cpu": "6", "memory": "20Gi"}})
    refused(
        tmp_path, stack_text(nodeGroups=groups, serving=[serving(both)]), "gpuplane:serving[0].variants[0].resources:"
    )


# --- 4. every problem in one report ------------------------------------------------------------------


def test_every_workload_problem_is_reported_at_once(tmp_path):
    training = {**TRAINING, "volumes": [{"volume": "scratch", "mountPath": "/scratch"}]}
    text = stack_text(
        nodeGroups=G5,
        storage={"uid": 1000},
        serving=[
            serving(CPU, variant(GPU, nodeGroups=["gpus"]), model={"name": "resnet", "volume": "weights"}),
            serving(name="resnet"),
        ],
        training=[training],
    )
    refused(
        tmp_path,
        text,
        "gpuplane:storage.uid:",
        "gpuplane:serving[0].model.volume: volume 'weights' is not defined",
        "gpuplane:serving[0].variants[1].nodeGroups:",
        "gpuplane:serving[1].name: 'resnet' is already used by serving[0]",
        "gpuplane:training[0].volumes[0].volume: volume 'scratch' is not defined",
    )


def test_platform_problems_and_workload_problems_come_together(tmp_path):
    text = stack_text(
        nodeGroups=[*G5, {"name": "system", "instanceTypes": ["m6i.large"]}],
        cluster={"publicAccessCidrs": ["198.51.100.7/32"], "serviceIpv4Cidr": "10.0.0.0/16"},
        serving=[serving(model={"name": "resnet", "volume": "weights"})],
    )
    refused(
        tmp_path,
        text,
        "gpuplane:nodeGroups: group name(s) ['system'] used more than once",
        "gpuplane:cluster.serviceIpv4Cidr:",
        "gpuplane:serving[0].model.volume:",
    )


def test_a_direct_caller_gets_every_problem_in_one_error():
    from gpuplane.components.config import PlatformArgs  # noqa: PLC0415
    from gpuplane.components.config.base import FieldErrors  # noqa: PLC0415
    from gpuplane.components.config.workloads import ServingArgs  # noqa: PLC0415
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.serving import serving_spec  # noqa: PLC0415

    platform = PlatformArgs.model_validate({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}, "nodeGroups": G5})
    args = ServingArgs.model_validate(serving(variant(GPU, nodeGroups=["gpus"]), model={"name": "r", "volume": "w"}))
    with pytest.raises(FieldErrors) as info:
        serving_spec(args, WorkloadContext.of(platform))
    assert [e.field for e in info.value.errors] == ["model.volume", "variants[0].nodeGroups"]


# --- 1. every derived name within its limit, checked as the formula it is ------------------------------


def name(length: int, stem: str = "n") -> str:
    return (stem + "x" * length)[:length]


@pytest.mark.parametrize(("variant_length", "ok"), [(32, True), (33, False)])
def test_service_name_of_serving_and_variant_fits_a_dns_1035_label(tmp_path, variant_length, ok):
    text = stack_text(serving=[serving(variant(CPU, name=name(variant_length, "v")), name=name(30, "s"))])
    if ok:  # 30 + '-' + 32 = 63
        accepted(tmp_path, text)
        return
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[0].name: makes the Service name",
        "(<serving.name>-<variant.name>): 64 characters",
        "allows at most 63: cut 1 character from serving[0].variants[0].name or serving[0].name",
    )


def test_a_workload_name_is_a_dns_1035_label_on_its_own(tmp_path):
    refused(tmp_path, stack_text(serving=[serving(name=name(64, "s"))]), "gpuplane:serving[0].name:", "DNS-1035 label")
    refused(tmp_path / "digit", stack_text(serving=[serving(name="9lives")]), "gpuplane:serving[0].name:")


S3_MODEL = {"name": "resnet", "import": {"source": "s3://models-bucket/resnet/"}}


@pytest.mark.parametrize(("length", "ok"), [(23, True), (24, False)])
def test_s3_import_role_name_with_pulumis_suffix_fits_iam(tmp_path, length, ok):
    # gpuplane-dev-serving-<name>-import-role + 8 <= 64  ->  name <= 23 on stack dev
    text = stack_text(serving=[serving(name=name(length, "s"), model=S3_MODEL)])
    if ok:
        accepted(tmp_path, text)
        return
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].name: makes the IAM role name 'gpuplane-dev-serving-",
        "-import-role' (<clusterName>-serving-<serving[].name>-import-role plus Pulumi's auto-name suffix (8)): 65",
        "IAM allows at most 64: cut 1 character from serving[0].name or clusterName (default <project>-<stack>)",
    )


@pytest.mark.parametrize(("length", "ok"), [(22, True), (23, False)])
def test_training_s3_data_import_role_fits_iam(tmp_path, length, ok):
    training = {**TRAINING, "name": name(length, "t"), "dataImport": {"source": "s3://data-bucket/d/", "path": "d"}}
    text = stack_text(training=[training])
    if ok:
        accepted(tmp_path, text)
        return
    refused(tmp_path, text, "gpuplane:training[0].name: makes the IAM role name", "-training-", ": 65 characters")


@pytest.mark.parametrize(("length", "ok"), [(37, True), (38, False)])
def test_training_pod_names_as_jobset_forms_them(tmp_path, length, ok):
    # <name>-<8-hex hash>-worker-0-1 + '-abcde' <= 63 (two workers) -> name <= 37
    text = stack_text(training=[{**TRAINING, "name": name(length, "t")}])
    if ok:
        accepted(tmp_path, text)
        return
    refused(
        tmp_path,
        text,
        "gpuplane:training[0].name: makes the pod name of role 'worker'",
        "-########-worker-0-1' (<training.name>-<8-hex spec hash>-worker-0-<replicas-1> plus the pod's random "
        "suffix '-abcde' (6)): 64 characters",
        "JobSet's webhook refuses the run unless it is a DNS-1035 label, which allows at most 63",
    )


@pytest.mark.parametrize(("run_id_length", "ok"), [(40, True), (41, False)])
def test_a_config_run_id_counts_in_the_pod_names(tmp_path, run_id_length, ok):
    # mnist-<runId>-worker-0-1-abcde <= 63 -> runId <= 40
    text = stack_text(training=[{**TRAINING, "runId": name(run_id_length, "r")}])
    if ok:
        accepted(tmp_path, text)
        return
    refused(tmp_path, text, "gpuplane:training[0].name: makes the pod name", "training[0].name or training[0].runId")


@pytest.mark.parametrize(("replicas", "ok"), [(10, True), (11, False)])
def test_the_largest_pod_index_counts(tmp_path, replicas, ok):
    # 37 characters fit with workers 0..9 (one digit); worker 10 adds one
    worker = {**TRAINING["worker"], "replicas": replicas}
    text = stack_text(training=[{**TRAINING, "name": name(37, "t"), "worker": worker}])
    if ok:
        accepted(tmp_path, text)
        return
    refused(tmp_path, text, "-worker-0-10'", "cut 1 character from training[0].name or training[0].worker.replicas")


def test_with_a_data_import_the_same_pod_rule_binds(tmp_path):
    data = {"source": "https://example.com/d.tar.gz", "path": "d"}
    accepted(tmp_path, stack_text(training=[{**TRAINING, "name": name(37, "t"), "dataImport": data}]))
    refused(
        tmp_path / "long",
        stack_text(training=[{**TRAINING, "name": name(38, "t"), "dataImport": data}]),
        "gpuplane:training[0].name: makes the pod name of role 'worker'",
    )


def test_train_run_id_applies_the_same_rule():
    # the shipped dev stack: mnist, two workers -> mnist-<run id>-worker-0-1-abcde <= 63 -> run id <= 40
    ok = runner.invoke(app, ["train", "dev", "mnist", "--plan", "--run-id", name(40, "r")])
    assert ok.exit_code == 0, ok.output
    assert f"name: mnist-{name(40, 'r')}" in ok.output
    bad = runner.invoke(app, ["train", "dev", "mnist", "--plan", "--run-id", name(41, "r")])
    flat = " ".join(bad.output.split())
    assert bad.exit_code == 2, bad.output
    assert "--run-id: makes the pod name of role 'worker'" in flat
    assert "64 characters" in flat and "cut 1 character from --run-id or training[0].name" in flat
    assert "Traceback" not in flat


@pytest.mark.parametrize(("length", "ok"), [(33, True), (34, False)])
def test_the_flow_log_role_counts_on_prod(tmp_path, length, ok):
    # prod turns flow logs on: <clusterName>-network-flow-logs-role + 8 <= 64 -> clusterName <= 33
    text = stack_text(profile="prod", clusterName=name(length, "c"), cluster={})
    if ok:
        accepted(tmp_path, text, stack="prod")
        return
    refused(
        tmp_path,
        text,
        "gpuplane:clusterName: makes the IAM role name",
        "-network-flow-logs-role'",
        "cut 1 character from clusterName",
        stack="prod",
    )


# --- 5. S3 bucket and key rules (S3 user guide) for every s3:// source -----------------------------------

S3_BAD_BUCKETS = {
    "ml..models": "two adjacent periods",
    "ab": "has 2 characters; S3 allows 3 to 63",
    "b" * 64: "has 64 characters",
    "-models": "must begin and end with a lowercase letter or digit",
    "models-": "must begin and end with a lowercase letter or digit",
    "Models": "only lowercase letters, digits",
    "my_models": "only lowercase letters, digits",
    "192.168.5.4": "formatted as an IP address",
    "xn--models": "starts with 'xn--'",
    "sthree-models": "starts with 'sthree-'",
    "amzn-s3-demo-models": "starts with 'amzn-s3-demo-'",
    "models-s3alias": "ends with '-s3alias'",
    "models--ol-s3": "ends with '--ol-s3'",
    "models.mrap": "ends with '.mrap'",
    "models--x-s3": "ends with '--x-s3'",
    "models--table-s3": "ends with '--table-s3'",
}


@pytest.mark.parametrize("bucket", sorted(S3_BAD_BUCKETS))
def test_s3_bucket_rules_for_a_model_import(tmp_path, bucket):
    model = {"name": "resnet", "import": {"source": f"s3://{bucket}/resnet/"}}
    refused(
        tmp_path,
        stack_text(serving=[serving(model=model)]),
        "gpuplane:serving[0].model.import.source:",
        "breaks S3's naming rules",
        S3_BAD_BUCKETS[bucket],
    )


def test_s3_buckets_at_the_rules_edges_pass(tmp_path):
    """Each edge in a serving of its own, one render for all: a bucket is judged per serving, and a refused one
    would be named by its serving's index."""
    buckets = ["abc", "b" * 63, "ml.models", "1.2.3.4a", "models-s3"]
    entries = [
        serving(name=f"resnet{i}", model={"name": "resnet", "import": {"source": f"s3://{bucket}/resnet/"}})
        for i, bucket in enumerate(buckets)
    ]
    accepted(tmp_path, stack_text(serving=entries))
    plan = (tmp_path / "out" / "plan.json").read_text()
    assert all(f"s3://{bucket}/resnet/" in plan for bucket in buckets)


def test_s3_key_rules_for_a_data_import(tmp_path):
    key_at = "k" * 1024
    ok = {**TRAINING, "dataImport": {"source": f"s3://data-bucket/{key_at}", "path": "d"}}
    accepted(tmp_path / "ok", stack_text(training=[ok]))
    over = {**TRAINING, "dataImport": {"source": f"s3://data-bucket/{key_at}k", "path": "d"}}
    refused(
        tmp_path / "long",
        stack_text(training=[over]),
        "gpuplane:training[0].dataImport.source:",
        "the key is 1025 bytes of UTF-8; S3 allows at most 1024",
    )
    multibyte = {**TRAINING, "dataImport": {"source": "s3://data-bucket/" + "é" * 513, "path": "d"}}
    refused(tmp_path / "utf8", stack_text(training=[multibyte]), "the key is 1026 bytes")


S3_WILDCARD_SOURCES = {
    # source -> (the character named, the prefix offered instead)
    "s3://team-models/*": ("'*'", "'s3://team-models/'"),
    "s3://team-models/resnet/v?/": ("'?'", "'s3://team-models/resnet/'"),
    "s3://team-models/${aws:username}/m.tar.gz": ("'${'", "'s3://team-models/'"),
    "s3://team-models/resnet/*/saved_model.pb": ("'*'", "'s3://team-models/resnet/'"),
}


@pytest.mark.parametrize("source", sorted(S3_WILDCARD_SOURCES))
def test_an_s3_source_with_iam_wildcards_is_refused_naming_its_key_and_a_prefix(tmp_path, source):
    """IAM would read `*`, `?` and `${` in the import's read policy: `s3://team-models/*` would read every object."""
    char, instead = S3_WILDCARD_SOURCES[source]
    model = {"name": "resnet", "import": {"source": source}}
    refused(
        tmp_path / "serving",
        stack_text(serving=[serving(model=model)]),
        "gpuplane:serving[0].model.import.source:",
        f"holds {char}",
        "wildcard or a policy variable",
        f"e.g. {instead}",
    )
    data = {**TRAINING, "dataImport": {"source": source, "path": "d"}}
    refused(tmp_path / "training", stack_text(training=[data]), "gpuplane:training[0].dataImport.source:", char)


# --- 6. YAML merge keys ----------------------------------------------------------------------------------

MERGED = """config:
  aws:region: us-west-2
  gpuplane:cluster: {publicAccessCidrs: [198.51.100.7/32]}
  gpuplane:serving:
    - name: resnet
      model: {name: resnet}
      variants:
        - &small
          name: cpu
          replicas: 2
          resources: {limits: {cpu: "1", memory: 2Gi}}
        - <<: *small
          name: cpu2
          replicas: 1
"""
EXPANDED = """config:
  aws:region: us-west-2
  gpuplane:cluster: {publicAccessCidrs: [198.51.100.7/32]}
  gpuplane:serving:
    - name: resnet
      model: {name: resnet}
      variants:
        - name: cpu
          replicas: 2
          resources: {limits: {cpu: "1", memory: 2Gi}}
        - name: cpu2
          replicas: 1
          resources: {limits: {cpu: "1", memory: 2Gi}}
"""


def test_a_stack_with_merge_keys_renders_the_same_plan_as_its_expanded_twin(tmp_path):
    plans = []
    for label, text in (("merged", MERGED), ("expanded", EXPANDED)):
        code, output, out = render(tmp_path / label, text)
        assert code == 0, output
        plans.append((out / "plan.json").read_text())
    assert plans[0] == plans[1]
    assert '"cpu2"' in plans[0] and '"replicas": 1' in plans[0]  # the mapping's own key won over the merged one


def test_a_key_written_twice_beside_a_merge_is_still_a_duplicate(tmp_path):
    text = MERGED.replace("          replicas: 1\n", "          replicas: 1\n          replicas: 3\n")
    refused(tmp_path, text, "key 'replicas' appears twice in one mapping")


# --- 7. every botocore pattern is a whole-string rule ----------------------------------------------------


@pytest.mark.parametrize("cluster_name", ["My Cluster!", "gpu-cluster!", "gpu-cluster\n"])
def test_the_eks_cluster_name_pattern_applies_to_the_whole_name(tmp_path, cluster_name):
    # botocore: ^[0-9A-Za-z][A-Za-z0-9\-_]* (no $): each value starts right and ends wrong
    refused(tmp_path, stack_text(clusterName=cluster_name), "gpuplane:clusterName: EKS cluster name", "as a whole")


def test_a_cluster_name_that_is_right_to_the_end_passes(tmp_path):
    accepted(tmp_path, stack_text(clusterName="Gpu_cluster-2"))


@pytest.mark.parametrize(
    ("storage", "key"),
    [
        ({"basePath": "/dynamic\n"}, "gpuplane:storage.basePath:"),
        ({"volumes": [{"name": "models", "path": "/models\n"}]}, "gpuplane:storage.volumes[0].path:"),
    ],
)
def test_the_efs_path_pattern_applies_to_the_whole_path(tmp_path, storage, key):
    # botocore efs Path: ^(\/|(\/(?!\.)+[^$#<>;`|&?{}^*/\n]+){1,4})$ ('$' also matches before a final newline)
    refused(tmp_path, stack_text(storage=storage), key, "not an EFS")


def test_the_partition_region_pattern_applies_to_the_whole_region():
    from gpuplane.components.facts import partition  # noqa: PLC0415

    assert partition.of_region("us-west-2").id == "aws"
    assert partition.of_region("us-west-99").id == "aws"  # not listed, matched by the regex as a whole
    with pytest.raises(ValueError, match="not a region of a supported AWS partition"):
        partition.of_region("us-west-99\n")


# --- 2. strict numbers: a boolean is never a count, size or fraction ---------------------------------------


def test_gpus_yes_is_refused_and_one_gpu_passes(tmp_path):
    # `yes` is the string 'yes' for the engine (yaml.v3, infra/stackyaml.py), `true` a boolean: both refused.
    for word, said in (("yes", "got 'yes'"), ("true", "True is a boolean; a number is expected")):
        text = stack_text(nodeGroups=G5, serving=[serving(GPU)]).replace('"gpus": 1', f'"gpus": {word}')
        assert f'"gpus": {word}' in text
        refused(tmp_path / word, text, "gpuplane:serving[0].variants[0].resources.gpus:", said)
    accepted(tmp_path / "ok", stack_text(nodeGroups=G5, serving=[serving(GPU)]))


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["", "/data/train.py"], "gpuplane:training[0].command: item 0 is empty; each item is one word of the command"),
        (["python", "train\u0000.py"], "gpuplane:training[0].command: item 1 holds a NUL character"),
    ],
)
def test_an_empty_or_nul_word_of_a_training_command_is_refused_at_its_key(tmp_path, command, said):
    # Both passed the stack once and stopped the render with a traceback, in the runtime helper's wrapping.
    refused(tmp_path, stack_text(training=[variant(TRAINING, command=command)]), said)


def test_a_boolean_size_or_retention_is_refused(tmp_path):
    text = stack_text(
        nodeGroups=[{"name": "system", "instanceTypes": ["m6i.large"], "maxSize": True}],
        network={"flowLogs": True, "flowLogRetentionDays": True},
    )
    refused(
        tmp_path,
        text,
        "gpuplane:nodeGroups[0].maxSize: True is a boolean",
        "gpuplane:network.flowLogRetentionDays: True is a boolean",
    )


def _models(model: Any, seen: set[Any]) -> list[Any]:
    from pydantic import BaseModel  # noqa: PLC0415

    from gpuplane.infra.config import _model_in  # noqa: PLC0415

    if model in seen:
        return []
    seen.add(model)
    found = [model]
    for field in model.model_fields.values():
        inner = _model_in(field.annotation)
        if inner is not None and issubclass(inner, BaseModel):
            found += _models(inner, seen)
    return found


def test_every_number_field_of_the_whole_config_refuses_a_boolean():
    from pydantic import ValidationError  # noqa: PLC0415

    from gpuplane.components.config import PlatformArgs  # noqa: PLC0415
    from gpuplane.components.config.base import _wants_number  # noqa: PLC0415

    checked = []
    for model in _models(PlatformArgs, set()):
        for field_name, field in model.model_fields.items():
            if not _wants_number(field.annotation):
                continue
            alias = field.alias or field_name
            with pytest.raises(ValidationError) as info:
                model.model_validate({alias: True})
            errors = [e for e in info.value.errors() if e["loc"] == (alias,)]
            assert errors and "is a boolean" in errors[0]["msg"], (model.__name__, alias, errors)
            checked.append(f"{model.__name__}.{alias}")
    # the counts, sizes and fractions of every section are among them
    expected = (
        "ResourcesArgs.gpus",
        "NodeGroupArgs.minSize",
        "StorageArgs.provisionedThroughputMibps",
        "NetworkArgs.azCount",
        "RoleArgs.replicas",
        "TimeSlicingArgs.replicas",
        "BatchingArgs.maxBatchSize",
    )
    for name in expected:
        assert name in checked, (name, checked)


def test_every_variant_older_than_the_training_is_reported(tmp_path):
    old = {"image": "tensorflow/serving:2.19.0", "tensorflowVersion": "2.19.0"}
    exporting = {
        **TRAINING,
        "volumes": [{"volume": "models", "mountPath": "/models"}],
        "export": {"volume": "models", "path": "resnet"},
    }
    text = stack_text(  # the model is the training's export (model.fromTraining): the pair the rule compares
        serving=[
            serving(
                variant(CPU, **old), variant(CPU, name="cpu2", **old), model={"name": "resnet", "fromTraining": "mnist"}
            )
        ],
        training=[exporting],
    )
    refused(
        tmp_path,
        text,
        "gpuplane:serving[0].variants[0].image: serving 'resnet' variant 'cpu' runs TensorFlow 2.19.0",
        "gpuplane:serving[0].variants[1].image: serving 'resnet' variant 'cpu2' runs TensorFlow 2.19.0",
    )
