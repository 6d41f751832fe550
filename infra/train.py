"""`gpuplane train`: submit a training run built from the stack config, at most once per spec or run id.

Lifecycle (docs/workloads.md): `pulumi up` never runs training. The run is a JobSet named
`<workload>-<runId or spec hash>`; a changed spec or run id is a new name and so a new run. A run that
exists, or that the namespace's ledger (ConfigMap `gpuplane-runs`) records as submitted, is not submitted
again, even after its TTL has removed it, unless `--rerun`. Finished runs are deleted by their TTL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuplane.infra.options import (
    EXIT_FAILED,
    EXIT_INVALID_CONFIG,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    console,
    load_or_exit,
    project_or_exit,
)

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
    """The run's JobSet from the stack config (the same builder as render); ValueError for an unknown name."""
    from gpuplane.components.training import training_spec  # noqa: PLC0415
    from gpuplane.components.workload_args import check_run_id  # noqa: PLC0415
    from gpuplane.components.workload_checks import WorkloadContext  # noqa: PLC0415
    from gpuplane.manifests import training  # noqa: PLC0415

    workloads = {t.name: t for t in config.platform.training}
    if name not in workloads:
        known = ", ".join(sorted(workloads)) or "none"
        raise ValueError(f"no training workload '{name}' in stack '{config.stack}'; gpuplane:training has: {known}")
    args = workloads[name]
    if run_id is not None:
        check_run_id(run_id)
    spec = training_spec(args, WorkloadContext.of(config.platform))
    return training.jobset(spec, run_id or args.run_id)


def submit(api: kube.KubeApi, obj: dict[str, Any], *, rerun: bool = False, now: datetime | None = None) -> Outcome:
    """Create the run unless it exists or the ledger has it; `rerun` replaces either."""
    from gpuplane.infra import kube  # noqa: PLC0415
    from gpuplane.manifests import training  # noqa: PLC0415

    namespace, run = obj["metadata"]["namespace"], obj["metadata"]["name"]
    existing = api.get_jobset(namespace, run)
    ledger = api.read_ledger(namespace)
    if not rerun:
        if existing is not None:
            return Outcome(run, "exists", kube.jobset_state(existing))
        if run in ledger:
            return Outcome(run, "already-ran", "finished and cleaned up (in the run ledger)")
    if existing is not None:
        api.delete_jobset(namespace, run)
    api.create_jobset(namespace, obj)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ledger[run] = kube.ledger_record(obj["metadata"]["annotations"][training.RUN_SPEC_ANNOTATION], stamp)
    api.write_ledger(namespace, ledger)
    return Outcome(run, "submitted", "Running")


def plan(obj: dict[str, Any]) -> Outcome:
    """`--plan`: the manifest, without contacting a cluster."""
    import yaml  # noqa: PLC0415

    return Outcome(obj["metadata"]["name"], "planned", manifest=yaml.safe_dump(obj, sort_keys=True))


def wait(api: kube.KubeApi, namespace: str, run: str, *, poll_seconds: float = 10.0) -> str:
    """Poll until the run completes or fails; its final state (`Gone` if its TTL removed it first)."""
    import time  # noqa: PLC0415 - only --wait sleeps

    from gpuplane.infra import kube  # noqa: PLC0415

    while True:
        obj = api.get_jobset(namespace, run)
        if obj is None:
            return "Gone"
        state = kube.jobset_state(obj)
        if state in ("Completed", "Failed"):
            return state
        time.sleep(poll_seconds)


def register(app: typer.Typer) -> None:
    """Add the `train` command to the gpuplane CLI."""

    @app.command()
    def train(  # noqa: PLR0917 - a CLI command: typer passes its options by keyword
        stack: StackArgument,
        name: Annotated[str, typer.Argument(help="A training workload of gpuplane:training")],
        run_id: Annotated[str | None, typer.Option(help="Run id. Default: a hash of the spec.")] = None,
        plan_only: Annotated[bool, typer.Option("--plan", help="Print the JobSet; contact no cluster.")] = False,
        kubeconfig: Annotated[
            Path | None,
            typer.Option(
                help="Taken as given (relative to the current folder). Default: .gpuplane/<stack>/kubeconfig in the "
                "project (from `gpuplane kubeconfig`)."
            ),
        ] = None,
        rerun: Annotated[bool, typer.Option(help="Submit again even if this run exists or ran.")] = False,
        wait_: Annotated[bool, typer.Option("--wait", help="Wait until the run completes or fails.")] = False,
        stacks_dir: StacksDirOption = None,
        project_dir: ProjectOption = None,
    ) -> None:
        """Submit training run NAME of STACK as a JobSet, once per spec or run id (docs/workloads.md)."""
        from gpuplane.infra import kube  # noqa: PLC0415
        from gpuplane.infra import project as paths  # noqa: PLC0415

        err = console()
        nothing = "Nothing was submitted."
        from gpuplane.infra.config import ConfigError  # noqa: PLC0415

        project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
        config = load_or_exit(stack, project, nothing=nothing)
        try:
            obj = build(config, name, run_id)
        except ConfigError as exc:
            for problem in exc.problems:
                err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
            err.print(nothing)
            raise typer.Exit(EXIT_INVALID_CONFIG) from None
        except ValueError as exc:
            err.print(f"[bold red]Error:[/] {exc}", soft_wrap=True, highlight=False)
            err.print(nothing)
            raise typer.Exit(EXIT_INVALID_CONFIG) from None
        if plan_only:
            typer.echo(plan(obj).manifest, nl=False)
            return
        path = kubeconfig or paths.kubeconfig_path(project, stack)
        try:
            api = kube.ClusterApi(path)
        except kube.KubeconfigMissing as exc:
            err.print(f"[bold red]Error:[/] {exc}", soft_wrap=True, highlight=False)
            raise typer.Exit(EXIT_FAILED) from None
        outcome = submit(api, obj, rerun=rerun)
        typer.echo(f"{outcome.run}: {outcome.action} ({outcome.state})")
        if wait_ and outcome.action in ("submitted", "exists"):
            final = wait(api, obj["metadata"]["namespace"], outcome.run)
            typer.echo(f"{outcome.run}: {final}")
            if final == "Failed":
                raise typer.Exit(EXIT_FAILED)
