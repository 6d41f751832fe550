"""`gpuplane train`: submit a training run built from the stack config, at most once per spec or run id.

Lifecycle (docs/workloads.md): `pulumi up` never runs training. The run is a JobSet named
`<workload>-<runId or spec hash>`; a changed spec or run id is a new name and so a new run. A run that
exists, or that the namespace's ledger (ConfigMap `gpuplane-runs`) records as submitted, is not submitted
again, even after its TTL has removed it, unless `--rerun`. Finished runs are deleted by their TTL.
Runs go through the training queue (Kueue): submitted suspended with the queue label, started when
admitted whole; their state comes from Kueue's Workload (infra/queue.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuplane.infra.options import (
    EXIT_FAILED,
    EXIT_INVALID_CONFIG,
    KubeconfigOption,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    cluster_failed,
    console,
    error,
    kube_source,
    load_or_exit,
    project_or_exit,
)
from gpuplane.infra.untrusted import shown

if TYPE_CHECKING:
    from gpuplane.infra import kube
    from gpuplane.infra.config import StackConfig

# What this module needs beyond typer is imported inside the functions: `gpuplane --help` imports this
# module to list the command, and must not pay for Pulumi (components) or the Kubernetes client.


@dataclass(frozen=True)
class Outcome:
    """What the command did, for the terminal and the tests."""

    run: str
    action: str  # submitted | exists | already-ran | planned
    state: str = ""
    manifest: str = ""


def build(config: StackConfig, name: str, run_id: str | None = None) -> dict[str, Any]:
    """The run's queued JobSet from the stack config (the same builder as render).

    ValueError for an unknown name, a run id whose pod names would not fit (the config's name rules), or
    a run that no GPU group could hold whole at its maxSize.
    """
    from gpuplane.components.config.workloads import check_run_id  # noqa: PLC0415
    from gpuplane.components.plan import names  # noqa: PLC0415
    from gpuplane.components.plan.placement import WorkloadContext  # noqa: PLC0415
    from gpuplane.components.plan.training import queued_run  # noqa: PLC0415

    workloads = {t.name: t for t in config.platform.training}
    if name not in workloads:
        known = ", ".join(sorted(workloads)) or "none"
        raise ValueError(f"no training workload '{name}' in stack '{config.stack}'; gpuplane:training has: {known}")
    args = workloads[name]
    if run_id is not None:
        check_run_id(run_id)
        # The same name rule as the config's runId: every pod name of the run fits with this id.
        names.check_run(args, run_id, prefix=f"training[{config.platform.training.index(args)}].")
    return queued_run(args, WorkloadContext.of(config.platform), config.platform.queue, run_id)


class StillDeleting(RuntimeError):
    """The replaced run did not go away in time (its Workload's finalizer waits for Kueue)."""


def submit(
    api: kube.KubeApi,
    obj: dict[str, Any],
    *,
    rerun: bool = False,
    now: datetime | None = None,
    sleep: Callable[[float], None] | None = None,
    gone_timeout: float = 300.0,
) -> Outcome:
    """Create the run unless it exists or the ledger has it; `rerun` replaces either.

    A replaced run is deleted in the foreground (its Jobs, pods, Workload and ProvisioningRequest first,
    and the Workload carries Kueue's finalizer): the new one is created once the old name is free.
    """
    from gpuplane.infra import kube  # noqa: PLC0415
    from gpuplane.infra import queue as run_queue  # noqa: PLC0415
    from gpuplane.manifests import training  # noqa: PLC0415

    namespace, run = obj["metadata"]["namespace"], obj["metadata"]["name"]
    existing = api.get_jobset(namespace, run)
    ledger = api.read_ledger(namespace)
    if not rerun:
        if existing is not None:
            return Outcome(run, "exists", str(run_queue.run_state(api, existing)))
        if run in ledger:
            return Outcome(run, "already-ran", "finished and cleaned up (in the run ledger)")
    if existing is not None:
        api.delete_jobset(namespace, run)
        _await_gone(api, namespace, run, sleep=sleep, timeout=gone_timeout)
    api.create_jobset(namespace, obj)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ledger[run] = kube.ledger_record(obj["metadata"]["annotations"][training.RUN_SPEC_ANNOTATION], stamp)
    api.write_ledger(namespace, ledger)
    # Kueue admits it (or not): a new run starts queued, whatever the cluster's free capacity.
    return Outcome(run, "submitted", "Queued")


def _await_gone(
    api: kube.KubeApi, namespace: str, run: str, *, sleep: Callable[[float], None] | None, timeout: float
) -> None:
    import time  # noqa: PLC0415 - only a rerun waits

    pause = sleep or time.sleep
    waited = 0.0
    while api.get_jobset(namespace, run) is not None:
        if waited >= timeout:
            raise StillDeleting(
                f"run {run} is still being deleted after {timeout:.0f} s (its Workload's finalizer waits for Kueue); "
                f"try again when `kubectl -n {namespace} get jobset {run}` finds nothing"
            )
        pause(2.0)
        waited += 2.0


def plan(obj: dict[str, Any], queue_objects: list[dict[str, Any]] | None = None) -> Outcome:
    """`--plan`: the queued JobSet, then the queue objects it goes through, without contacting a cluster."""
    import yaml  # noqa: PLC0415

    docs = [obj, *(queue_objects or [])]
    return Outcome(obj["metadata"]["name"], "planned", manifest=yaml.safe_dump_all(docs, sort_keys=True))


def queue_objects(config: StackConfig) -> list[dict[str, Any]]:
    """The stack's queue objects (what `pulumi up` applies for the run to be admitted through)."""
    from gpuplane.components.plan.training_queue import queue_spec  # noqa: PLC0415
    from gpuplane.manifests import queue as queue_manifests  # noqa: PLC0415

    platform = config.platform
    spec = queue_spec(
        platform.workload_namespace,
        platform.resolved_node_groups,
        platform.queue,
        kubernetes_version=platform.cluster.kubernetes_version,
        autoscaler=platform.autoscaler.enabled,
    )
    return queue_manifests.objects(spec)


def wait(
    api: kube.KubeApi,
    namespace: str,
    run: str,
    *,
    poll_seconds: float = 10.0,
    report: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> str:
    """Follow the run through the queue until it ends; its final state.

    Each change of state (queued with its position, provisioning, admitted, running, requeued) goes to
    `report`. Ends on Completed, Failed, Deactivated (evicted past the requeue limit) or Gone (its TTL
    removed it first).
    """
    import time  # noqa: PLC0415 - only --wait sleeps

    from gpuplane.infra import queue as run_queue  # noqa: PLC0415

    pause = sleep or time.sleep
    last = ""
    while True:
        obj = api.get_jobset(namespace, run)
        if obj is None:
            return "Gone"
        state = run_queue.run_state(api, obj)
        if report is not None and str(state) != last:
            report(str(state))
        last = str(state)
        if state.state in run_queue.TERMINAL:
            return state.state
        pause(poll_seconds)


def register(app: typer.Typer) -> None:
    """Add the `train` command to the gpuplane CLI."""

    @app.command()
    def train(  # noqa: PLR0917 - a CLI command: typer passes its options by keyword
        stack: StackArgument,
        name: Annotated[str, typer.Argument(help="A training workload of gpuplane:training")],
        run_id: Annotated[str | None, typer.Option(help="Run id. Default: a hash of the spec.")] = None,
        plan_only: Annotated[
            bool, typer.Option("--plan", help="Print the queued JobSet and the queue objects; contact no cluster.")
        ] = False,
        kubeconfig: KubeconfigOption = None,
        rerun: Annotated[bool, typer.Option(help="Submit again even if this run exists or ran.")] = False,
        wait_: Annotated[
            bool, typer.Option("--wait", help="Follow the run through the queue until it completes or fails.")
        ] = False,
        stacks_dir: StacksDirOption = None,
        project_dir: ProjectOption = None,
    ) -> None:
        """Submit training run NAME of STACK through the queue, once per spec or run id (docs/workloads.md)."""
        from gpuplane.infra import kube  # noqa: PLC0415

        err = console()
        nothing = "Nothing was submitted."
        from gpuplane.infra.config import ConfigError  # noqa: PLC0415

        project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
        config = load_or_exit(stack, project, nothing=nothing)
        try:
            obj = build(config, name, run_id)
        except ConfigError as exc:
            for problem in exc.problems:
                err.print(f"  - {problem}", soft_wrap=True)
            err.print(nothing)
            raise typer.Exit(EXIT_INVALID_CONFIG) from None
        except ValueError as exc:
            error(str(exc))
            err.print(nothing)
            raise typer.Exit(EXIT_INVALID_CONFIG) from None
        if plan_only:
            typer.echo(plan(obj, queue_objects(config)).manifest, nl=False)
            return
        try:
            api = kube.ClusterApi(kube_source(kubeconfig, project, stack, config))
        except kube.KubeError as exc:
            raise cluster_failed(exc, None, nothing=nothing) from None
        try:
            outcome = submit(api, obj, rerun=rerun)
            typer.echo(f"{outcome.run}: {outcome.action} ({outcome.state})")
            if wait_ and outcome.action in ("submitted", "exists"):
                final = wait(
                    api,
                    obj["metadata"]["namespace"],
                    outcome.run,
                    report=lambda s: typer.echo(f"{outcome.run}: {shown(s)}"),
                )
                typer.echo(f"{outcome.run}: {shown(final)}")
                if final in ("Failed", "Deactivated"):
                    raise typer.Exit(EXIT_FAILED)
        except StillDeleting as exc:
            error(str(exc))
            raise typer.Exit(EXIT_FAILED) from None
        except typer.Exit:
            raise
        except Exception as exc:
            raise cluster_failed(exc, getattr(api, "connection", None)) from None
