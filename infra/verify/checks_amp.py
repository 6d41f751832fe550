"""Checks of the AMP backend (`observability.metrics: managedPrometheus`): its parts ACTIVE, samples arriving.

What `components/observability.py` `_managed` creates is ACTIVE, and samples arrive in the workspace.

How the stack's resources are found without its outputs (verify reads the config, not the Pulumi state): the
workspace and the collector both carry the alias `clusterName` (`aws.amp.Workspace(alias=cluster_name)`,
`aws.amp.Scraper(alias=cluster_name)`); the collector is the one whose source is this cluster and whose
destination is that workspace; the rule groups namespace is `gpuplane`. AMP creates each asynchronously
(`CREATING` first): a check polls while its resource is still being created or updated, within its deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from gpuplane.infra.verify import promapi, samples
from gpuplane.infra.verify.amp import RULES_NAMESPACE, Amp
from gpuplane.infra.verify.checks_metrics import metrics_after
from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped

POLL_S: Final = 15.0
TRANSITIONAL: Final = frozenset({"CREATING", "UPDATING"})
"""Statuses AMP moves out of on its own (every status enum of the `amp` model: CREATING, ACTIVE, UPDATING,
DELETING, CREATION_FAILED, UPDATE_FAILED, DELETION_FAILED)."""
IAM_FIX: Final = (
    "check the stack's AWS identity with `gpuplane preflight STACK`; verify needs aps:ListWorkspaces, "
    "aps:DescribeWorkspace, aps:ListScrapers, aps:DescribeRuleGroupsNamespace, aps:DescribeAlertManagerDefinition "
    "and aps:QueryMetrics (docs/verify.md)"
)


def _amp(ctx: Context) -> Amp:
    assert ctx.aws is not None  # each check skips first without a session
    try:
        return ctx.aws.amp()
    except Exception as exc:  # AwsError: a profile, an assumed role
        raise CheckFailed(
            f"no AMP client for the stack's identity: {getattr(exc, 'message', None) or exc}",
            "no AWS credentials for the stack's identity",
            getattr(exc, "fix", "") or IAM_FIX,
        ) from None


def _call(what: str, call: Callable[[], Any]) -> Any:
    """An AMP call; a botocore error (access denied, throttling past the retries) fails the check naming it."""
    try:
        return call()
    except CheckFailed:
        raise
    except Exception as exc:
        raise CheckFailed(
            f"AMP did not answer {what}: {getattr(exc, 'message', None) or exc}",
            "the stack's identity may not call it (IAM), or no credentials",
            IAM_FIX,
        ) from None


def find_workspace(ctx: Context, amp: Amp) -> dict[str, Any]:
    """The stack's workspace (`DescribeWorkspace` answer): alias `clusterName`; of several, the collector's."""
    alias = ctx.expect.cluster_name
    found = _call("ListWorkspaces", lambda: amp.workspaces(alias))
    if not found:
        raise CheckFailed(
            f"no AMP workspace with alias {alias} in {ctx.expect.region}",
            "`pulumi up` has not created it (or it was deleted outside Pulumi); the stack names its workspace "
            "after the cluster",
            f"run `pulumi up`; `aws amp list-workspaces --alias {alias} --region {ctx.expect.region}`",
        )
    if len(found) > 1:
        written = {_destination(s) for s in _call("ListScrapers", lambda: amp.scrapers(alias)) if _ours(ctx, s)}
        fed = [w for w in found if w.get("arn") in written]
        if len(fed) != 1:
            raise CheckFailed(
                f"{len(found)} AMP workspaces have the alias {alias}: {', '.join(w['workspaceId'] for w in found)}",
                "another stack or a person created a workspace with the same alias; none is told apart by a "
                "collector of this cluster writing to it",
                "delete or rename (`aws amp update-workspace-alias`) the workspace that is not the stack's",
            )
        found = fed
    described = _call("DescribeWorkspace", lambda: amp.workspace(found[0]["workspaceId"]))
    if described is None:  # deleted between the two calls
        raise CheckFailed(
            f"AMP workspace {found[0]['workspaceId']} disappeared while verify read it",
            "it is being deleted",
            "run `pulumi up`, then verify again",
        )
    return dict(described)


def _ours(ctx: Context, scraper: Mapping[str, Any]) -> bool:
    arn = str(((scraper.get("source") or {}).get("eksConfiguration") or {}).get("clusterArn", ""))
    return arn.endswith(f":cluster/{ctx.expect.cluster_name}")


def _destination(scraper: Mapping[str, Any]) -> str:
    return str(((scraper.get("destination") or {}).get("ampConfiguration") or {}).get("workspaceArn", ""))


def _status(item: Mapping[str, Any]) -> tuple[str, str]:
    status = item.get("status") or {}
    return str(status.get("statusCode", "?")), str(status.get("statusReason") or item.get("statusReason") or "")


def until_active(
    ctx: Context, what: str, read: Callable[[], dict[str, Any]], cause: str, fix: str
) -> tuple[dict[str, Any], float]:
    """Read until the resource is ACTIVE (and the seconds waited); fail on a failed state or at the deadline."""
    start = ctx.clock()
    while True:
        item = read()
        code, reason = _status(item)
        if code == "ACTIVE":
            return item, ctx.clock() - start
        because = f": {reason}" if reason else ""
        if code not in TRANSITIONAL:
            raise CheckFailed(f"{what} is {code}{because}", cause, fix, details={"status": code, "reason": reason})
        if ctx.remaining() <= POLL_S:
            raise CheckFailed(
                f"{what} still {code} after {ctx.clock() - start:.0f} s{because}",
                "AMP has not finished creating or updating it (a collector takes up to about 20 minutes)",
                "run verify again later; if it stays so, " + fix,
                details={"status": code, "reason": reason},
            )
        ctx.progress(f"{what} {code}")
        ctx.wait(POLL_S)


def check_workspace(ctx: Context) -> Outcome:
    """The stack's workspace is ACTIVE."""
    if ctx.aws is None:
        return skipped("no AWS session: the AMP workspace not checked")
    amp = _amp(ctx)
    first = find_workspace(ctx, amp)
    ws_id = first["workspaceId"]

    def read() -> dict[str, Any]:
        got = _call("DescribeWorkspace", lambda: amp.workspace(ws_id))
        if got is None:
            raise CheckFailed(f"AMP workspace {ws_id} is gone", "it was deleted", "run `pulumi up`")
        return dict(got)

    workspace, waited = until_active(
        ctx,
        f"AMP workspace {ws_id} (alias {first.get('alias')})",
        read,
        "AMP could not create or update it: with the stack's own KMS key, the key policy must let AMP use it "
        "through aps (components/kms.py `via_services`)",
        f"`aws amp describe-workspace --workspace-id {ws_id}`; `pulumi up` again",
    )
    return passed(
        f"workspace {ws_id} (alias {workspace.get('alias')}) ACTIVE; "
        f"query endpoint {workspace.get('prometheusEndpoint')}",
        timings={"waitedActive": round(waited, 1)} if waited else None,
        workspace=ws_id,
        prometheusEndpoint=workspace.get("prometheusEndpoint"),
    )


def check_collector(ctx: Context) -> Outcome:
    """The managed collector of this cluster writes to the stack's workspace and is ACTIVE."""
    if ctx.aws is None:
        return skipped("no AWS session: the AMP collector not checked")
    amp = _amp(ctx)
    workspace = find_workspace(ctx, amp)
    alias = ctx.expect.cluster_name

    def read() -> dict[str, Any]:
        mine = [s for s in _call("ListScrapers", lambda: amp.scrapers(alias)) if _ours(ctx, s)]
        if not mine:
            raise CheckFailed(
                f"no AMP collector with alias {alias} scrapes cluster {alias}",
                "`pulumi up` has not created it (or it was deleted outside Pulumi)",
                f"run `pulumi up`; `aws amp list-scrapers --filters alias={alias}`",
            )
        feeding = [s for s in mine if _destination(s) == workspace.get("arn")]
        if not feeding:
            raise CheckFailed(
                f"collector {mine[0].get('scraperId')} writes to {_destination(mine[0])}, not to the stack's "
                f"workspace {workspace.get('arn')}",
                "the workspace was replaced and the collector not (or another stack's collector has this alias)",
                "run `pulumi up` (the collector follows its workspace)",
            )
        return dict(feeding[0])

    scraper, waited = until_active(
        ctx,
        "AMP collector",
        read,
        "AMP could not create it: the status reason says why (the cluster's authentication mode must admit "
        "access entries, the subnets must span 2 AZs, the cluster must be ACTIVE)",
        "`aws amp describe-scraper --scraper-id ID`; fix what the reason names, then `pulumi up`",
    )
    return passed(
        f"collector {scraper.get('scraperId')} ACTIVE, cluster {alias} -> workspace {workspace.get('workspaceId')}",
        timings={"waitedActive": round(waited, 1)} if waited else None,
        scraper=scraper.get("scraperId"),
    )


def check_rules(ctx: Context) -> Outcome:
    """The alert rules' namespace `gpuplane` is ACTIVE in the workspace."""
    if ctx.aws is None:
        return skipped("no AWS session: the AMP rules not checked")
    amp = _amp(ctx)
    ws_id = find_workspace(ctx, amp)["workspaceId"]

    def read() -> dict[str, Any]:
        got = _call("DescribeRuleGroupsNamespace", lambda: amp.rule_groups_namespace(ws_id, RULES_NAMESPACE))
        if got is None:
            raise CheckFailed(
                f"no rule groups namespace {RULES_NAMESPACE} in workspace {ws_id}",
                "`pulumi up` has not created it (or it was deleted outside Pulumi): no alert fires",
                "run `pulumi up`",
            )
        return dict(got)

    namespace, waited = until_active(
        ctx,
        f"rule groups namespace {RULES_NAMESPACE}",
        read,
        "AMP refused the rules (the status reason names the rule); they pass `promtool check rules` in the tests",
        f"`aws amp describe-rule-groups-namespace --workspace-id {ws_id} --name {RULES_NAMESPACE}`",
    )
    return passed(
        f"rule groups namespace {RULES_NAMESPACE} ACTIVE in workspace {ws_id}",
        timings={"waitedActive": round(waited, 1)} if waited else None,
        modifiedAt=str(namespace.get("modifiedAt", "")),
    )


def check_alertmanager(ctx: Context) -> Outcome:
    """The workspace's Alertmanager definition (routing to SNS) is ACTIVE."""
    if ctx.aws is None:
        return skipped("no AWS session: the AMP Alertmanager not checked")
    amp = _amp(ctx)
    ws_id = find_workspace(ctx, amp)["workspaceId"]

    def read() -> dict[str, Any]:
        got = _call("DescribeAlertManagerDefinition", lambda: amp.alertmanager(ws_id))
        if got is None:
            raise CheckFailed(
                f"no Alertmanager definition in workspace {ws_id}",
                "`pulumi up` has not created it: alerts fire but notify no one",
                "run `pulumi up`",
            )
        return dict(got)

    _definition, waited = until_active(
        ctx,
        "Alertmanager definition",
        read,
        "AMP refused the definition (the status reason says why: its YAML, or the SNS receiver)",
        f"`aws amp describe-alert-manager-definition --workspace-id {ws_id}`",
    )
    return passed(
        f"Alertmanager definition ACTIVE in workspace {ws_id} (receiver: SNS)",
        timings={"waitedActive": round(waited, 1)} if waited else None,
    )


def amp_targets(amp: Amp, endpoint: str) -> samples.Diagnose:
    """AMP's only word on a missing source's targets: `up` of its job (absent: the collector found none)."""

    def diagnose(found: samples.Found, by_name: Mapping[str, samples.Source], _ips: Mapping[str, str]) -> list[str]:
        lines = []
        for name, what in found.missing.items():
            job = by_name[name].job
            selectors = (
                [(name, f'up{{job=~"{job}"}}')]
                if what == [""]
                else [(f"{name} on {node}", f'up{{job=~"{job}", node="{node}"}}') for node in what]
            )
            for label, promql in selectors:
                try:
                    seen = samples.up_lines(amp.query(endpoint, promql))
                except promapi.QueryError as exc:
                    seen = [f"not read ({exc})"]
                lines.append(f"{label}: {', '.join(seen) if seen else 'no target (the collector discovered none)'}")
        return lines

    return diagnose


def check_amp_arriving(ctx: Context) -> Outcome:
    """The workspace holds recent samples of every source the collector scrapes (SigV4-signed queries)."""
    if ctx.aws is None:
        return skipped("no AWS session: AMP samples not checked")
    amp = _amp(ctx)
    workspace = find_workspace(ctx, amp)
    endpoint = str(workspace.get("prometheusEndpoint") or "")

    def query(promql: str) -> list[dict[str, Any]]:
        return amp.query(endpoint, promql)

    try:
        return samples.arriving(
            ctx,
            query,
            store=f"AMP workspace {workspace.get('workspaceId')}",
            diagnose=amp_targets(amp, endpoint),
            cause="the collector's first samples arrive a few minutes after it turns ACTIVE (this check polls "
            "within its deadline); past that: the target is down (up=0: the collector reaches it and the scrape "
            "fails), or the collector discovered none (its scrape config's job, the exporter's Service or port), or "
            "the exporter emits no such series yet",
            fix="`aws amp describe-scraper` (its status and scrape configuration); the render's collector scrape "
            "config (docs/operations.md)",
        )
    except promapi.QueryError as exc:
        raise CheckFailed(
            f"querying AMP failed: {exc}",
            "HTTP 403: the stack's identity may not call aps:QueryMetrics on the workspace; otherwise the network "
            "to the aps endpoint",
            IAM_FIX,
        ) from None


@register("amp", order=81)
def amp_checks(expect: Expectations) -> list[Check]:
    """The AMP backend's checks, where the stack uses it."""
    if expect.metrics_backend != "managedPrometheus":
        return []
    return [
        Check(
            "amp-workspace",
            "AMP workspace ACTIVE",
            check_workspace,
            deadline_s=120,
            proves="the stack's Amazon Managed Service for Prometheus workspace (alias clusterName) is ACTIVE",
        ),
        Check(
            "amp-collector",
            "AMP managed collector ACTIVE",
            check_collector,
            needs=("amp-workspace",),
            deadline_s=300,
            proves="the AWS managed collector of this cluster writes to the stack's workspace and is ACTIVE",
        ),
        Check(
            "amp-rules",
            "AMP alert rules ACTIVE",
            check_rules,
            needs=("amp-workspace",),
            deadline_s=120,
            proves=f"the rule groups namespace {RULES_NAMESPACE} (gpuplane's alert rules) is ACTIVE in the workspace",
        ),
        Check(
            "amp-alertmanager",
            "AMP Alertmanager ACTIVE",
            check_alertmanager,
            needs=("amp-workspace",),
            deadline_s=120,
            proves="the workspace's Alertmanager definition (every alert to SNS) is ACTIVE",
        ),
        Check(
            "amp-arriving",
            "Metrics arriving in AMP",
            check_amp_arriving,
            needs=("api", "amp-workspace", "amp-collector"),
            after=metrics_after(expect),
            deadline_s=600,
            proves="the workspace holds recent samples of each source the collector scrapes (DCGM from every "
            "Ready GPU node, kube-state-metrics, TF Serving's request counter), read with a SigV4-signed query",
        ),
    ]
