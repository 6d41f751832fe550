"""components.names derives every IAM role the program makes: a rendered plan has no role it does not know."""

from __future__ import annotations

import copy

import pytest

from gpuplane.components.config import PlatformArgs
from gpuplane.components.plan import names
from gpuplane.components.plan.placement import WorkloadContext
from gpuplane.components.plan.training import training_spec
from gpuplane.manifests import training
from tests.infra.test_workload_front_door import SERVING, TRAINING


def test_every_iam_role_of_the_program_is_a_derived_name(run_platform):
    serving = {**copy.deepcopy(SERVING), "model": {"name": "resnet", "import": {"source": "s3://models-bucket/r/"}}}
    training = {**copy.deepcopy(TRAINING), "dataImport": {"source": "s3://data-bucket/d/", "path": "d"}}
    overrides = {"network": {"flowLogs": True}, "serving": [serving], "training": [training]}
    run = run_platform(overrides, stack="names")
    made = sorted(r.name for r in run.by_type("aws:iam/role:Role"))
    derived = names.iam_role_names(
        "gpuplane-names",
        "clusterName",
        node_groups=["system", "gpu"],
        flow_logs=True,
        import_roles=[("serving", "resnet", "serving[0].name"), ("training", "mnist", "training[0].name")],
        metrics_roles=names.metrics_role_suffixes("prometheus"),
    )
    assert made == sorted(d.name for d in derived)
    assert len(made) == 11  # 4 cluster roles, flow logs, Alertmanager's, the EBS driver's, 2 groups, 2 imports


@pytest.mark.parametrize(
    ("backend", "extra"),
    [("cloudwatch", ["gpuplane-names-cloudwatch-agent-role"]), ("managedPrometheus", ["gpuplane-names-keda-amp-role"])],
)
def test_each_metrics_backend_s_roles_are_derived_names(run_platform, backend, extra):
    """The other backends' roles: the CloudWatch agent's; with AMP none of its own, but KEDA's when serving scales on
    its metrics (a GPU variant on requests per second)."""
    variant = {
        "name": "gpu",
        "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "gpus": 1},
        "autoscaling": {"minReplicas": 1, "maxReplicas": 2, "metric": "requestsPerSecond", "target": 40},
    }
    serving = {**copy.deepcopy(SERVING), "variants": [variant]} if backend == "managedPrometheus" else SERVING
    overrides = {"observability": {"metrics": backend}, "serving": [serving]}
    made = sorted(r.name for r in run_platform(overrides, stack="names").by_type("aws:iam/role:Role"))
    derived = names.iam_role_names(
        "gpuplane-names",
        "clusterName",
        node_groups=["system", "gpu"],
        metrics_roles=names.metrics_role_suffixes(backend, keda_on_amp=backend == "managedPrometheus"),
    )
    assert made == sorted(d.name for d in derived)
    assert set(extra) <= set(made)


def test_the_longest_name_per_keys_is_the_one_reported():
    found = names.problems(names.iam_role_names("c" * 40, "clusterName"))
    assert [p.field for p in found] == ["clusterName"]
    assert "-cluster-vpc-cni-role" in found[0].message  # the longest (first of the two of 21 characters)


def test_a_name_exactly_at_its_limit_passes_and_one_over_fails():
    at = names.DerivedName("Service name", "a" * 63, "<x>", ("k",), 63, "DNS-1035")
    over = names.DerivedName("Service name", "a" * 62, "<x>", ("k",), 63, "DNS-1035", added=2, added_by="s")
    assert at.problem() is None
    problem = over.problem()
    assert problem is not None and problem.field == "k" and "64 characters" in problem.message
    assert "cut 1 character from k" in problem.message


def test_the_pod_names_checked_are_the_ones_the_jobset_makes():
    """The rule follows the JobSet the run really is: every role's largest pod name, the import's hostname."""

    data = {"source": "https://example.com/d.tar.gz", "path": "d"}
    spec = {**copy.deepcopy(TRAINING), "dataImport": data, "runId": "exp-1"}
    args = PlatformArgs.model_validate({"cluster": {"publicAccessCidrs": ["198.51.100.7/32"]}, "training": [spec]})
    run = args.training[0]
    doc = training.jobset(training_spec(run, WorkloadContext.of(args)), run.run_id)
    jobset_pods = set()
    for rjob in doc["spec"]["replicatedJobs"]:
        job = rjob["template"]["spec"]
        last_job, last_pod = rjob["replicas"] - 1, job.get("completions", 1) - 1
        jobset_pods.add(f"{doc['metadata']['name']}-{rjob['name']}-{last_job}-{last_pod}")
        if rjob["name"] == "data-import":
            # JobSet's webhook checks only jobs that set completions; the import's pod is then named by
            # its hostname rule (no random suffix) in names.training_names.
            assert "completions" not in job
    derived = {n.name for n in names.training_names(run) if "pod" in n.what}
    assert derived == jobset_pods
