"""The AMP backend's checks: botocore's Stubber for the `amp` calls, a local HTTP server for the signed queries.

The Stubber checks every request and answer against the `amp` model botocore ships, so the shapes used here
(`ListWorkspaces` alias filter, `ListScrapers` filters, the status structures) are the service's own. The
query goes over real HTTP to a local server that answers as AMP's Prometheus API does (the same fake store
as the in-cluster tests) and records what it received: the SigV4 `Authorization` header, recomputed here.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs

import boto3
import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.stub import Stubber

from gpuplane.infra import config as stack_config
from gpuplane.infra.verify import checks_amp as ca
from gpuplane.infra.verify import command, model, promapi, runner, samples
from gpuplane.infra.verify.amp import Amp
from gpuplane.infra.verify.aws import StackAws
from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import CheckFailed
from tests import shipped
from tests.verify.fakes import FakeAws, FakeCluster, FakePrometheus, healthy_nodes

REGION = "us-west-2"
ACCOUNT = "123456789012"
WS_ID = "ws-0a1b2c3d-4e5f-6789-abcd-ef0123456789"
WS_ARN = f"arn:aws:aps:{REGION}:{ACCOUNT}:workspace/{WS_ID}"
CLUSTER_ARN = f"arn:aws:eks:{REGION}:{ACCOUNT}:cluster/gpuplane-dev"
T0 = datetime(2026, 11, 26, 10, tzinfo=UTC)
CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")


@pytest.fixture
def managed(dev: Expectations) -> Expectations:
    return dataclasses.replace(dev, metrics=False, metrics_backend="managedPrometheus")


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = botocore.session.get_session().create_client(
        "amp", region_name=REGION, aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret"
    )
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


class AmpApi(BaseHTTPRequestHandler):
    """AMP's query API: `POST /workspaces/<id>/api/v1/query`, form-encoded, answered from a `FakePrometheus`."""

    store: ClassVar[FakePrometheus] = FakePrometheus()
    received: ClassVar[list[tuple[str, dict[str, str], str]]] = []
    status: ClassVar[int] = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        AmpApi.received.append((self.path, dict(self.headers.items()), body))
        if AmpApi.status != 200:
            text = json.dumps({"message": "User is not authorized to perform: aps:QueryMetrics"})
        else:
            text = AmpApi.store.answer("api/v1/query", {k: v[0] for k, v in parse_qs(body).items()})
        data = text.encode()
        self.send_response(AmpApi.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    AmpApi.store, AmpApi.received, AmpApi.status = FakePrometheus(), [], 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), AmpApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/workspaces/{WS_ID}/"
    server.shutdown()


def _summary(alias: str = "gpuplane-dev", ws_id: str = WS_ID, status: str = "ACTIVE") -> dict[str, Any]:
    arn = f"arn:aws:aps:{REGION}:{ACCOUNT}:workspace/{ws_id}"
    return {"workspaceId": ws_id, "alias": alias, "arn": arn, "status": {"statusCode": status}, "createdAt": T0}


def _described(endpoint: str = "", status: str = "ACTIVE", ws_id: str = WS_ID) -> dict[str, Any]:
    found = {**_summary(ws_id=ws_id, status=status), "prometheusEndpoint": endpoint or f"https://x/{ws_id}/"}
    return {"workspace": found}


def _scraper(
    status: str = "ACTIVE", reason: str = "", dest: str = WS_ARN, cluster: str = CLUSTER_ARN
) -> dict[str, Any]:
    made: dict[str, Any] = {
        "scraperId": "s-1234abcd-56ef-7890-abcd-1234ef567890",
        "alias": "gpuplane-dev",
        "arn": f"arn:aws:aps:{REGION}:{ACCOUNT}:scraper/s-1234abcd-56ef-7890-abcd-1234ef567890",
        "roleArn": f"arn:aws:iam::{ACCOUNT}:role/aws-service-role/scraper.aps.amazonaws.com/"
        "AWSServiceRoleForAmazonPrometheusScraper",
        "status": {"statusCode": status},
        "createdAt": T0,
        "lastModifiedAt": T0,
        "source": {"eksConfiguration": {"clusterArn": cluster, "subnetIds": ["subnet-0a", "subnet-0b"]}},
        "destination": {"ampConfiguration": {"workspaceArn": dest}},
    }
    if reason:
        made["statusReason"] = reason
    return made


def _find(stub: Stubber, endpoint: str = "", extra: list[dict[str, Any]] | None = None) -> None:
    """The two calls `find_workspace` makes for one workspace with the stack's alias."""
    stub.add_response("list_workspaces", {"workspaces": [_summary(), *(extra or [])]}, {"alias": "gpuplane-dev"})
    stub.add_response("describe_workspace", _described(endpoint), {"workspaceId": WS_ID})


def _ctx(make_ctx, expect: Expectations, client: Any, *, cluster: FakeCluster | None = None, deadline_s: float = 120):
    amp = Amp(client, lambda: CREDENTIALS, REGION)
    return make_ctx(expect, cluster or FakeCluster(healthy_nodes(expect)), FakeAws(amp=amp), deadline_s=deadline_s)


def _fail(check, ctx) -> Any:
    with pytest.raises(CheckFailed) as caught:
        check(ctx)
    outcome = caught.value.outcome
    assert outcome.status == "fail" and outcome.evidence and outcome.cause and outcome.fix
    return outcome


# --- which checks ------------------------------------------------------------------------------------------
def test_only_a_managed_prometheus_stack_gets_the_amp_checks(dev, managed):
    assert ca.amp_checks(dev) == []
    checks = {c.name: c for c in ca.amp_checks(managed)}
    assert list(checks) == ["amp-workspace", "amp-collector", "amp-rules", "amp-alertmanager", "amp-arriving"]
    assert checks["amp-arriving"].needs == ("api", "amp-workspace", "amp-collector")
    assert checks["amp-arriving"].after == ("gpu-gpu", "serving")
    assert checks["amp-arriving"].deadline_s == 600  # the collector's first samples take minutes


def test_without_an_aws_session_each_is_skipped(managed, make_ctx):
    ctx = make_ctx(managed, FakeCluster([]))
    ctx.aws = None
    for check in ca.amp_checks(managed):
        outcome = check.run(ctx)
        assert outcome.status == "skipped" and outcome.evidence.startswith("no AWS session")


# --- the workspace -----------------------------------------------------------------------------------------
def test_workspace_active_found_by_its_exact_alias(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(
        stub,
        "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/",
        extra=[_summary("gpuplane-dev-2", "ws-other")],
    )
    stub.add_response(
        "describe_workspace", _described("https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/")
    )
    outcome = ca.check_workspace(_ctx(make_ctx, managed, client))
    assert outcome.status == "pass"
    assert outcome.evidence == (
        f"workspace {WS_ID} (alias gpuplane-dev) ACTIVE; query endpoint "
        "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1/"
    )


def test_workspace_creating_is_waited_for(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    stub.add_response("describe_workspace", _described(status="CREATING"))
    stub.add_response("describe_workspace", _described(status="ACTIVE"))
    outcome = ca.check_workspace(_ctx(make_ctx, managed, client))
    assert outcome.status == "pass" and outcome.timings == {"waitedActive": ca.POLL_S}


def test_workspace_creation_failed(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    stub.add_response("describe_workspace", _described(status="CREATION_FAILED"))
    failure = _fail(ca.check_workspace, _ctx(make_ctx, managed, client))
    assert failure.evidence == f"AMP workspace {WS_ID} (alias gpuplane-dev) is CREATION_FAILED"
    assert "KMS key" in failure.cause


def test_workspace_not_found(managed, make_ctx, stubbed):
    client, stub = stubbed
    stub.add_response(
        "list_workspaces", {"workspaces": [_summary("gpuplane-dev-old", "ws-old")]}, {"alias": "gpuplane-dev"}
    )
    failure = _fail(ca.check_workspace, _ctx(make_ctx, managed, client))
    assert failure.evidence == "no AMP workspace with alias gpuplane-dev in us-west-2"
    assert "pulumi up" in failure.fix


def test_two_workspaces_with_the_alias_are_told_apart_by_the_collector(managed, make_ctx, stubbed):
    client, stub = stubbed
    other = _summary(ws_id="ws-other")
    stub.add_response("list_workspaces", {"workspaces": [other, _summary()]}, {"alias": "gpuplane-dev"})
    stub.add_response("list_scrapers", {"scrapers": [_scraper()]}, {"filters": {"alias": ["gpuplane-dev"]}})
    stub.add_response("describe_workspace", _described(), {"workspaceId": WS_ID})
    stub.add_response("describe_workspace", _described(), {"workspaceId": WS_ID})
    assert ca.check_workspace(_ctx(make_ctx, managed, client)).status == "pass"
    # ...and without a collector of this cluster, neither is the stack's for sure.
    stub.add_response("list_workspaces", {"workspaces": [other, _summary()]}, {"alias": "gpuplane-dev"})
    stub.add_response("list_scrapers", {"scrapers": [_scraper(cluster=CLUSTER_ARN + "-other")]})
    failure = _fail(ca.check_workspace, _ctx(make_ctx, managed, client))
    assert failure.evidence == f"2 AMP workspaces have the alias gpuplane-dev: ws-other, {WS_ID}"


def test_access_denied_names_the_call_and_the_permissions(managed, make_ctx, stubbed):
    client, stub = stubbed
    stub.add_client_error(
        "list_workspaces", "AccessDeniedException", "not authorized to perform: aps:ListWorkspaces", 403
    )
    failure = _fail(ca.check_workspace, _ctx(make_ctx, managed, client))
    assert failure.evidence.startswith("AMP did not answer ListWorkspaces: An error occurred (AccessDeniedException)")
    assert "aps:ListWorkspaces" in failure.fix and "aps:QueryMetrics" in failure.fix


# --- the collector -----------------------------------------------------------------------------------------
def test_collector_active(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    stub.add_response("list_scrapers", {"scrapers": [_scraper()]}, {"filters": {"alias": ["gpuplane-dev"]}})
    outcome = ca.check_collector(_ctx(make_ctx, managed, client))
    assert outcome.status == "pass"
    assert (
        outcome.evidence
        == f"collector s-1234abcd-56ef-7890-abcd-1234ef567890 ACTIVE, cluster gpuplane-dev -> workspace {WS_ID}"
    )


def test_collector_creation_failed_says_the_reason(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    reason = "Cluster authentication mode must be API or API_AND_CONFIG_MAP"
    stub.add_response("list_scrapers", {"scrapers": [_scraper("CREATION_FAILED", reason)]})
    failure = _fail(ca.check_collector, _ctx(make_ctx, managed, client))
    assert failure.evidence == f"AMP collector is CREATION_FAILED: {reason}"
    assert failure.details == {"status": "CREATION_FAILED", "reason": reason}


def test_collector_still_creating_at_the_deadline(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    for _ in range(4):  # looks at 0, 15, 30 and 45 s of a 60 s deadline
        stub.add_response("list_scrapers", {"scrapers": [_scraper("CREATING")]})
    failure = _fail(ca.check_collector, _ctx(make_ctx, managed, client, deadline_s=60))
    assert failure.evidence == "AMP collector still CREATING after 45 s"
    assert "20 minutes" in failure.cause


def test_collector_missing_or_writing_elsewhere(managed, make_ctx, stubbed):
    client, stub = stubbed
    _find(stub)
    stub.add_response("list_scrapers", {"scrapers": [_scraper(cluster=CLUSTER_ARN + "-other")]})
    failure = _fail(ca.check_collector, _ctx(make_ctx, managed, client))
    assert failure.evidence == "no AMP collector with alias gpuplane-dev scrapes cluster gpuplane-dev"
    _find(stub)
    stub.add_response("list_scrapers", {"scrapers": [_scraper(dest=WS_ARN.replace(WS_ID, "ws-old"))]})
    failure = _fail(ca.check_collector, _ctx(make_ctx, managed, client))
    assert failure.evidence.startswith("collector s-1234abcd-56ef-7890-abcd-1234ef567890 writes to ")
    assert failure.evidence.endswith(f"not to the stack's workspace {WS_ARN}")


# --- rules and Alertmanager --------------------------------------------------------------------------------
def _rules(status: str, reason: str = "") -> dict[str, Any]:
    return {
        "ruleGroupsNamespace": {
            "arn": f"arn:aws:aps:{REGION}:{ACCOUNT}:rulegroupsnamespace/{WS_ID}/gpuplane",
            "name": "gpuplane",
            "status": {"statusCode": status, **({"statusReason": reason} if reason else {})},
            "data": b"groups: []",
            "createdAt": T0,
            "modifiedAt": T0,
        }
    }


def _alertmanager(status: str, reason: str = "") -> dict[str, Any]:
    return {
        "alertManagerDefinition": {
            "status": {"statusCode": status, **({"statusReason": reason} if reason else {})},
            "data": b"alertmanager_config: ''",
            "createdAt": T0,
            "modifiedAt": T0,
        }
    }


def test_rules_active_failed_and_missing(managed, make_ctx, stubbed):
    client, stub = stubbed
    params = {"workspaceId": WS_ID, "name": "gpuplane"}
    _find(stub)
    stub.add_response("describe_rule_groups_namespace", _rules("ACTIVE"), params)
    outcome = ca.check_rules(_ctx(make_ctx, managed, client))
    assert (
        outcome.status == "pass" and outcome.evidence == f"rule groups namespace gpuplane ACTIVE in workspace {WS_ID}"
    )
    _find(stub)
    stub.add_response("describe_rule_groups_namespace", _rules("UPDATE_FAILED", "group gpuplane-gpu: parse error"))
    failure = _fail(ca.check_rules, _ctx(make_ctx, managed, client))
    assert failure.evidence == "rule groups namespace gpuplane is UPDATE_FAILED: group gpuplane-gpu: parse error"
    _find(stub)
    stub.add_client_error("describe_rule_groups_namespace", "ResourceNotFoundException", "not found", 404)
    failure = _fail(ca.check_rules, _ctx(make_ctx, managed, client))
    assert failure.evidence == f"no rule groups namespace gpuplane in workspace {WS_ID}"


def test_alertmanager_active_creating_failed_and_missing(managed, make_ctx, stubbed):
    client, stub = stubbed
    params = {"workspaceId": WS_ID}
    _find(stub)
    stub.add_response("describe_alert_manager_definition", _alertmanager("CREATING"), params)
    stub.add_response("describe_alert_manager_definition", _alertmanager("ACTIVE"), params)
    outcome = ca.check_alertmanager(_ctx(make_ctx, managed, client))
    assert outcome.status == "pass" and outcome.timings == {"waitedActive": ca.POLL_S}
    _find(stub)
    stub.add_response("describe_alert_manager_definition", _alertmanager("CREATION_FAILED", "invalid sns_configs"))
    failure = _fail(ca.check_alertmanager, _ctx(make_ctx, managed, client))
    assert failure.evidence == "Alertmanager definition is CREATION_FAILED: invalid sns_configs"
    _find(stub)
    stub.add_client_error("describe_alert_manager_definition", "ResourceNotFoundException", "not found", 404)
    failure = _fail(ca.check_alertmanager, _ctx(make_ctx, managed, client))
    assert failure.evidence == f"no Alertmanager definition in workspace {WS_ID}"


# --- the signed query and samples arriving -----------------------------------------------------------------
def test_the_query_is_a_sigv4_signed_post_for_aps_in_the_region(endpoint):
    AmpApi.store = FakePrometheus({"up": [{"job": "dcgm-exporter", "instance": "10.0.1.5:9400", "up": "1"}]})
    amp = Amp(None, lambda: CREDENTIALS, REGION)
    result = amp.query(endpoint, 'up{job=~".*dcgm-exporter"}')
    assert result == [{"metric": {"job": "dcgm-exporter", "instance": "10.0.1.5:9400", "up": "1"}, "value": [1.0, "1"]}]
    ((path, headers, body),) = AmpApi.received
    assert path == f"/workspaces/{WS_ID}/api/v1/query"
    assert body == "query=up%7Bjob%3D~%22.%2Adcgm-exporter%22%7D"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["X-Amz-Security-Token"] == "session-token"
    auth = headers["Authorization"]
    stamp = headers["X-Amz-Date"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{stamp[:8]}/{REGION}/aps/aws4_request, ")
    assert "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, " in auth
    # The signature is what AWS would compute from what the server received (its Host header included).
    again = AWSRequest(
        method="POST",
        url=f"http://{headers['Host']}{path}",
        data=body,
        headers={k: headers[k] for k in ("Content-Type", "X-Amz-Date", "X-Amz-Security-Token")},
    )
    again.context["timestamp"] = stamp
    signer = SigV4Auth(CREDENTIALS.get_frozen_credentials(), "aps", REGION)
    expected = signer.signature(signer.string_to_sign(again, signer.canonical_request(again)), again)
    assert auth.endswith(f"Signature={expected}")


def test_a_refused_query_is_an_error_naming_the_status(endpoint):
    AmpApi.status = 403
    with pytest.raises(promapi.QueryError, match=r"HTTP 403 from .*aps:QueryMetrics"):
        Amp(None, lambda: CREDENTIALS, REGION).query(endpoint, "up")
    with pytest.raises(promapi.QueryError, match="no AWS credentials"):
        Amp(None, lambda: None, REGION).query(endpoint, "up")


def _managed_series() -> dict[str, list[dict[str, str]]]:
    return {
        # the managed collector's own relabelling gives each DCGM series its `node`
        "DCGM_FI_DEV_GPU_UTIL": [
            {"gpu": "0", "node": "gpu-0", "job": "dcgm-exporter"},
            {"gpu": "0", "node": "gpu-1", "job": "dcgm-exporter"},
        ],
        "kube_node_status_condition": [{"node": "system-0"}] * 2,
        ":tensorflow:serving:request_count": [{"model_name": "mobilenet", "status": "OK"}],
        # through the plain-HTTP relay, with the in-cluster ServiceMonitor's job name
        "kueue_pending_workloads": [{"cluster_queue": "gpu", "job": "kueue-controller-manager-metrics-service"}],
        # the collector's `cluster-autoscaler` job writes the in-cluster ServiceMonitor's job name
        "cluster_autoscaler_nodes_count": [{"state": "ready", "job": "cluster-autoscaler-aws-cluster-autoscaler"}],
        "up": [
            {"job": "dcgm-exporter", "node": "gpu-0", "instance": "10.0.1.5:9400", "up": "1"},
            {"job": "dcgm-exporter", "node": "gpu-1", "instance": "10.0.2.6:9400", "up": "0"},
        ],
    }


def test_amp_arriving_passes_with_kueue_through_the_relay(managed, make_ctx, stubbed, endpoint):
    client, stub = stubbed
    _find(stub, endpoint)
    AmpApi.store = FakePrometheus(_managed_series())
    cluster = FakeCluster(healthy_nodes(managed, gpu_nodes=True))
    outcome = ca.check_amp_arriving(_ctx(make_ctx, managed, client, cluster=cluster))
    assert outcome.status == "pass"
    assert outcome.evidence == (
        f"AMP workspace {WS_ID} holds samples of DCGM: 1 GPU(s) on gpu-0, 1 GPU(s) on gpu-1; kube-state-metrics: 2 "
        "series; TF Serving: model_name mobilenet; Kueue: 1 series; cluster-autoscaler: 1 series"
    )
    assert [parse_qs(b)["query"][0] for _p, _h, b in AmpApi.received] == [
        "DCGM_FI_DEV_GPU_UTIL",
        "count(kube_node_status_condition)",
        "count by (model_name) (:tensorflow:serving:request_count)",
        "count(kueue_pending_workloads)",
        "count(cluster_autoscaler_nodes_count)",
    ]


def test_amp_arriving_polls_while_the_collector_sends_its_first_samples(managed, make_ctx, stubbed, endpoint):
    client, stub = stubbed
    _find(stub, endpoint)
    AmpApi.store = FakePrometheus(_managed_series(), arrive_after={"kube_node_status_condition": 8})
    outcome = ca.check_amp_arriving(_ctx(make_ctx, managed, client, deadline_s=600))
    assert outcome.status == "pass" and outcome.timings == {"samplesSeenAfter": 8 * samples.POLL_S}


def test_amp_arriving_fails_naming_the_missing_node_and_its_up(managed, make_ctx, stubbed, endpoint):
    client, stub = stubbed
    _find(stub, endpoint)
    series = _managed_series()
    series["DCGM_FI_DEV_GPU_UTIL"] = series["DCGM_FI_DEV_GPU_UTIL"][:1]
    del series[":tensorflow:serving:request_count"]
    AmpApi.store = FakePrometheus(series)
    cluster = FakeCluster(healthy_nodes(managed, gpu_nodes=True))
    failure = _fail(ca.check_amp_arriving, _ctx(make_ctx, managed, client, cluster=cluster, deadline_s=60))
    assert failure.evidence == (
        "no DCGM_FI_DEV_GPU_UTIL from GPU node(s) gpu-1 (DCGM); no :tensorflow:serving:request_count samples "
        "(TF Serving) after 45 s. Targets: DCGM on gpu-1: 10.0.2.6:9400 up=0; TF Serving: no target (the collector "
        "discovered none)"
    )
    assert failure.cause.startswith("the collector's first samples arrive a few minutes after it turns ACTIVE")


def test_amp_arriving_fails_naming_the_autoscaler_without_target(managed, make_ctx, stubbed, endpoint):
    client, stub = stubbed
    _find(stub, endpoint)
    series = _managed_series()
    del series["cluster_autoscaler_nodes_count"]
    AmpApi.store = FakePrometheus(series)
    cluster = FakeCluster(healthy_nodes(managed, gpu_nodes=True))
    failure = _fail(ca.check_amp_arriving, _ctx(make_ctx, managed, client, cluster=cluster, deadline_s=60))
    assert failure.evidence.startswith("no cluster_autoscaler_nodes_count samples (cluster-autoscaler) after")
    assert failure.evidence.endswith("Targets: cluster-autoscaler: no target (the collector discovered none)")
    # the job as a PromQL string: no regex escapes, which PromQL would refuse (`\-` is no string escape)
    queries = [parse_qs(b)["query"][0] for _p, _h, b in AmpApi.received]
    assert queries[-1] == 'up{job=~"cluster-autoscaler-aws-cluster-autoscaler"}'


def test_amp_arriving_without_query_permission(managed, make_ctx, stubbed, endpoint):
    client, stub = stubbed
    _find(stub, endpoint)
    AmpApi.status = 403
    failure = _fail(ca.check_amp_arriving, _ctx(make_ctx, managed, client))
    assert failure.evidence.startswith("querying AMP failed: HTTP 403 from ")
    assert "aps:QueryMetrics" in failure.cause


def test_stack_aws_gives_an_amp_client_for_the_stack_region():
    config = stack_config.load("dev", shipped.STACKS)
    session = boto3.session.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="x", region_name=REGION)
    amp = StackAws(config, lambda: session).amp()
    assert amp.region == config.region == REGION == amp._client.meta.region_name
    assert amp._client.meta.service_model.signing_name == "aps"


def test_a_managed_stack_runs_the_amp_checks_instead_of_the_in_cluster_ones(managed):
    command.load_checks()
    names = [c.name for c in model.checks_for(managed)]
    assert [n for n in names if n.startswith(("amp-", "metrics"))] == [
        "amp-workspace",
        "amp-collector",
        "amp-rules",
        "amp-alertmanager",
        "amp-arriving",
    ]
    # --only adds what a check needs, not what it runs after (the GPU probe costs a GPU node).
    selected = runner.select(model.checks_for(managed), ["amp-arriving"])
    assert [c.name for c in selected] == ["api", "amp-workspace", "amp-collector", "amp-arriving"]
