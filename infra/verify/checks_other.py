"""Teardown readiness and the items only a real cluster shows that verify does not probe yet.

Teardown: what `pulumi destroy` would trip on is what Kubernetes created in AWS behind Pulumi's back (load
balancers, their security groups, network interfaces); the janitor's own finder lists them, dry run.

The rest (point 7): docs/workloads.md lists what "only a real cluster can show". Each item is either covered
by a check above (the read-only root under the workload uid: `runtime`; GPU scheduling and the images' GPU
checks: `gpu-*`) or named here as skipped, with the reason and the command that checks it by hand, so the
report never implies more than was proven.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuplane.infra.verify.expect import Expectations
from gpuplane.infra.verify.model import Check, CheckFailed, Context, Outcome, passed, register, skipped


def check_teardown(ctx: Context) -> Outcome:
    """List what the teardown hooks (or `gpuplane janitor`) must delete before the VPC can go."""
    if ctx.aws is None:
        return skipped("no AWS session: teardown readiness not checked")
    try:
        found = ctx.aws.teardown_leftovers()
    except Exception as exc:  # an AwsError or a botocore error: the scan itself failed
        raise CheckFailed(
            f"the janitor's scan failed: {exc}",
            "the identity lacks the read permissions the janitor needs (ec2:Describe*, elasticloadbalancing:Describe*)",
            "run `gpuplane janitor STACK` to see the same error with its fix",
        ) from None
    if not found:
        return passed("nothing Kubernetes created in AWS: `pulumi destroy` has nothing extra to remove")
    listed = ", ".join(f"{o.kind} {o.name or o.id}" for o in found[:8]) + (" ..." if len(found) > 8 else "")
    return passed(
        f"{len(found)} resources Kubernetes created ({listed}): `pulumi destroy --run-program` deletes them first "
        "(or `gpuplane janitor STACK --delete` after the cluster is gone)",
        leftovers=[{"kind": o.kind, "id": o.id, "name": o.name, "reason": o.reason} for o in found],
    )


# name, title, condition on the stack, why it is not probed, how to check it by hand
NOT_PROBED: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "network-policy",
        "NetworkPolicy enforcement",
        "any",
        "needs two probe pods and the VPC CNI's network policy agent on; not probed yet",
        "from a pod the policy does not admit: `kubectl run np --rm -it --image=busybox -- nc -zv SERVICE 8501` "
        "must time out",
    ),
    (
        "grpc-health",
        "Serving's gRPC health probe",
        "serving",
        "the kubelet's gRPC probe result shows as the variant's readiness; not probed separately yet",
        "`kubectl -n NS get pods -l app.kubernetes.io/name=SERVING`: READY 1/1 means the gRPC probe passed",
    ),
    (
        "pod-identity-import",
        "Pod Identity credentials in the model import's aws-cli",
        "serving",
        "needs an s3:// model source and a run of the import Job; not probed yet",
        "`kubectl -n NS logs job/<serving>-import -c fetch` shows the download, or AccessDenied",
    ),
    (
        "queue-webhooks",
        "Kueue's webhook suspending an unsuspended run",
        "training",
        "the training-<workload> checks submit runs suspended, as `gpuplane train` does, so they show admission "
        "but not the webhook suspending a run submitted without it; not probed",
        "submit a JobSet with the queue label and `suspend: false`: `kubectl get jobset` shows it suspended",
    ),
)


def _not_probed(reason: str, by_hand: str) -> Callable[[Context], Outcome]:
    def run(_ctx: Context) -> Outcome:
        return skipped(f"{reason}; by hand: {by_hand}")

    return run


@register("other", order=90)
def other_checks(expect: Expectations) -> list[Check]:
    """Teardown readiness and the real-cluster-only items not probed yet."""
    made = [
        Check(
            "teardown",
            "Teardown readiness",
            check_teardown,
            deadline_s=120,
            proves="what `pulumi destroy` must remove first, by the janitor's own finder (dry run)",
        )
    ]
    for name, title, when, reason, by_hand in NOT_PROBED:
        if when == "serving" and not expect.variants:
            continue
        if when == "training" and not expect.training:
            continue
        made.append(Check(name, title, _not_probed(reason, by_hand), deadline_s=5, proves=f"not probed: {reason}"))
    return made
