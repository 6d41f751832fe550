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
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from gpuplane.components.training import training_spec
from gpuplane.components.workload_args import check_run_id
from gpuplane.components.workload_checks import WorkloadContext
from gpuplane.infra import config as stack_config
from gpuplane.infra import kube
from gpuplane.infra.config import StackConfig
from gpuplane.manifests import training


@dataclass(frozen=True)
class Outcome:
    """What the command did, for the terminal and the tests."""

    run: str
    action: str  # submitted | exists | already-ran | planned
    state: str = ""
    manifest: str = ""


def build(config: StackConfig, name: str, run_id: str | None = None) -> dict[str, Any]:
    """The run's JobSet from the stack config (the same builder as render); ValueError for an unknown name."""
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
    return Outcome(obj["metadata"]["name"], "planned", manifest=yaml.safe_dump(obj, sort_keys=True))


def wait(api: kube.KubeApi, namespace: str, run: str, *, poll_seconds: float = 10.0) -> str:
    """Poll until the run completes or fails; its final state (`Gone` if its TTL removed it first)."""
    import time  # noqa: PLC0415 - only --wait sleeps

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
        stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
        name: Annotated[str, typer.Argument(help="A training workload of gpuplane:training")],
        run_id: Annotated[str | None, typer.Option(help="Run id. Default: a hash of the spec.")] = None,
        plan_only: Annotated[bool, typer.Option("--plan", help="Print the JobSet; contact no cluster.")] = False,
        kubeconfig: Annotated[Path | None, typer.Option(help="Default: build/<stack>/kubeconfig")] = None,
        rerun: Annotated[bool, typer.Option(help="Submit again even if this run exists or ran.")] = False,
        wait_: Annotated[bool, typer.Option("--wait", help="Wait until the run completes or fails.")] = False,
        stacks_dir: Annotated[Path, typer.Option(help="Where the stack files are.")] = stack_config.STACKS_DIR,
    ) -> None:
        """Submit training run NAME of STACK as a JobSet, once per spec or run id (docs/workloads.md)."""
        err = Console(stderr=True)
        try:
            config = stack_config.load(stack, stacks_dir)
            obj = build(config, name, run_id)
        except stack_config.ConfigError as exc:
            for problem in exc.problems:
                err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except ValueError as exc:
            err.print(f"[bold red]Error:[/] {exc}", soft_wrap=True, highlight=False)
            raise typer.Exit(2) from None
        if plan_only:
            typer.echo(plan(obj).manifest, nl=False)
            return
        path = kubeconfig or Path("build") / stack / "kubeconfig"
        if not path.is_file():
            err.print(f"[bold red]Error:[/] no kubeconfig at {path}; run `gpuplane kubeconfig {stack}` first")
            raise typer.Exit(1)
        api = kube.ClusterApi(path)
        outcome = submit(api, obj, rerun=rerun)
        typer.echo(f"{outcome.run}: {outcome.action} ({outcome.state})")
        if wait_ and outcome.action in ("submitted", "exists"):
            final = wait(api, obj["metadata"]["namespace"], outcome.run)
            typer.echo(f"{outcome.run}: {final}")
            if final == "Failed":
                raise typer.Exit(1)
