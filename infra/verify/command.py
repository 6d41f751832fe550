"""`gpuplane verify STACK`: probe the running cluster and report each check with evidence, cause, fix, timings.

The CLI's glue only: read the stack (exit 2 on invalid config or options, nothing created), build the
expectations, the checks and the seams (the kubeconfig `gpuplane kubeconfig` wrote, the stack's AWS
identity), run them (`runner`), print the table and write the report under `.gpuplane/<stack>/verify/<run>/`.
Exit 0 when no check failed, 1 when one did (or the run left objects behind), 2 on bad input, 130 on Ctrl-C.
`--plan` prints every object the checks would create, without a cluster. Start-up: this module imports only
typer and the shared options; the rest loads when the command runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from gpuplane.infra.options import (
    KubeconfigOption,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    cluster_failed,
    console,
    error,
    kube_source,
    load_or_exit,
    looked_up,
    project_or_exit,
    styled,
)

if TYPE_CHECKING:
    from rich.console import Console

    from gpuplane.infra.config import Project, StackConfig
    from gpuplane.infra.kubeaccess import Source
    from gpuplane.infra.verify.expect import Expectations
    from gpuplane.infra.verify.model import Check
    from gpuplane.infra.verify.runner import RunReport

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_BAD_INPUT: Final = 2
EXIT_INTERRUPTED: Final = 130
VERIFY_DIR: Final = "verify"


def new_run_id() -> str:
    """A short, sortable, unique DNS label: UTC time plus random hex (22 characters)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def load_checks() -> None:
    """Import the check modules so their factories register (a later issue adds its module here)."""
    from gpuplane.infra.verify import (  # noqa: F401, PLC0415
        checks_amp,
        checks_capacity,
        checks_cloudwatch,
        checks_control,
        checks_gpu,
        checks_metrics,
        checks_other,
        checks_pods,
        checks_training,
    )


def plan_objects(
    expect: Expectations, checks: list[Check], run_id: str, *, second_az: bool = False
) -> list[dict[str, Any]]:
    """Every object a run of `checks` would create: the run's namespace and what it holds, then each check's probes.

    `second_az`: with the pod that makes the autoscaler add a CPU node in another AZ (made only when the CPU
    nodes turn out to be in one AZ; the plan cannot know which nodes there are, so it avoids none).
    """
    from gpuplane.infra.verify import checks_pods  # noqa: PLC0415
    from gpuplane.manifests import verify as probes  # noqa: PLC0415

    found: list[dict[str, Any]] = []
    for check in checks:
        if check.name == "storage" and second_az and expect.volumes:
            found.append(checks_pods.second_node_plan(expect, run_id))
        if check.probes is not None:
            found += check.probes(expect, run_id)
    namespace = probes.probe_namespace_name(run_id)
    if not any(o["metadata"].get("namespace") == namespace for o in found):
        return found  # as a run: the namespace is made only for a probe that lives in it
    return [probes.probe_namespace(run_id, expect.kubernetes_version), *probes.standing_objects(run_id), *found]


def register(app: typer.Typer) -> None:
    """Add the `verify` command to the gpuplane CLI."""
    app.command(name="verify")(command)


def _bad_input(message: str, nothing: str) -> typer.Exit:
    error(message)
    console().print(nothing)
    return typer.Exit(EXIT_BAD_INPUT)


def command(  # noqa: PLR0917 - typer maps each parameter to an option
    stack: StackArgument,
    kubeconfig: KubeconfigOption = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            metavar="CHECK",
            help="Run only this check (and what it needs); repeat. `gpu` means every GPU group.",
        ),
    ] = None,
    skip_gpu: Annotated[
        bool, typer.Option("--skip-gpu", help="Skip the checks that start a GPU node (they cost GPU minutes).")
    ] = False,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave the probe namespace and pods in place for inspection.")
    ] = False,
    second_az: Annotated[
        bool,
        typer.Option(
            "--second-az",
            help="When the CPU nodes are all in one AZ, let the storage check start one more CPU node in another "
            "AZ to prove shared volumes across AZs (it costs that node for the check plus the autoscaler's "
            "scale-down delay; the storage check's evidence states the amount).",
        ),
    ] = False,
    plan: Annotated[
        bool, typer.Option("--plan", help="Print every object the checks would create; contact no cluster.")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of the table.")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=looked_up,
            help="Report folder, taken as given. Default: .gpuplane/<stack>/verify/<run id> in the project.",
        ),
    ] = None,
    profile: Annotated[
        str | None, typer.Option(help="AWS profile. Default: the stack's aws:profile, else the environment's.")
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(
            "--deadline",
            metavar="SECONDS",
            min=1,
            help="At most this long for any one check (each has its own default, up to 20 minutes for a GPU node), "
            "for each API call, and for the clean-up; a check still waiting then fails and the run goes on.",
        ),
    ] = None,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Probe STACK's running cluster: nodes, add-ons, GPUs, the runtime helper, storage, serving, teardown.

    Exits 0 when no check failed, 1 when one did, 2 on bad input (nothing is created), 130 on Ctrl-C.
    """
    from gpuplane.infra import kube  # noqa: PLC0415
    from gpuplane.infra import project as paths  # noqa: PLC0415
    from gpuplane.infra.untrusted import shown  # noqa: PLC0415
    from gpuplane.infra.verify import expect as expectations  # noqa: PLC0415
    from gpuplane.infra.verify import model, runner  # noqa: PLC0415

    nothing = "Nothing was created."
    project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
    config = load_or_exit(stack, project, nothing=nothing)
    run_id = new_run_id()
    load_checks()
    try:
        expect = expectations.from_config(config)
        checks = runner.select(model.checks_for(expect), only or [])
    except ValueError as exc:
        raise _bad_input(str(exc), nothing) from None
    if second_az and not expect.autoscaler:
        raise _bad_input(
            "--second-az: the stack runs no cluster-autoscaler (gpuplane:autoscaler.enabled is false), so nothing "
            "would add the node; scale a CPU group to 2 nodes instead",
            nothing,
        )
    if plan:
        import yaml  # noqa: PLC0415

        objects = plan_objects(expect, checks, run_id, second_az=second_az)
        typer.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)
        return
    if deadline is not None:  # every check, call and the clean-up end by then (the runner adds its grace)
        checks = [dataclasses.replace(c, deadline_s=min(c.deadline_s, deadline)) for c in checks]
    timeout = (min(10.0, deadline), min(30.0, deadline)) if deadline else None
    source = kube_source(kubeconfig, project, stack, config)
    try:  # the project's kubeconfig only as gpuplane wrote it; --kubeconfig as kubectl would (infra/kubeaccess.py)
        cluster = _cluster(source, timeout)
    except kube.KubeError as exc:
        raise cluster_failed(exc, None, nothing=nothing) from None
    err = console()  # prints literally: the cluster's words are never markup

    with err.status(f"verify {stack}: run {run_id}") as status:
        the_runner = runner.Runner(
            expect,
            cluster,
            _aws(config, profile),
            run_id,
            _objects(cluster, expect, run_id),
            # the cluster's words: control characters shown, length bounded, one line
            progress=lambda message: status.update(shown(message, 200, one_line=True)),
            second_az=second_az,
            kubeconfig=str(source.path),
            # a call still running past the deadline gets a quarter of it more (at most GRACE_S), so the whole
            # run of one check ends within the deadline plus 15 s
            grace_s=min(runner.GRACE_S, max(1.0, deadline / 4)) if deadline else runner.GRACE_S,
            cleanup_s=deadline or runner.CLEANUP_S,
        )
        result = the_runner.run(checks, skip_gpu=skip_gpu, keep=keep)
    # What is left to do is print: a Ctrl-C now would cost the list of what is left behind.
    previous = None
    with contextlib.suppress(ValueError):  # not the main thread (a test runner's): nothing to protect
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = EXIT_INTERRUPTED if result.interrupted else EXIT_OK if result.ok else EXIT_FAILED
    try:
        out_dir = out or paths.state_dir(project, stack) / VERIFY_DIR / run_id
        _report(result, out_dir, out_given=out is not None, json_output=json_output, project=project, err=err)
    finally:
        if any(t.is_alive() for t in the_runner.abandoned):
            # A thread still stuck in a call: the interpreter's exit would wait on it (or on the locks it holds).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if code:
        raise typer.Exit(code)


def _report(
    result: RunReport, out_dir: Path, *, out_given: bool, json_output: bool, project: Project, err: Console
) -> None:
    """Write report.json and report.html, print the table (or the JSON), the summary and what was left."""
    import json  # noqa: PLC0415

    from gpuplane.infra import project as paths  # noqa: PLC0415
    from gpuplane.infra.untrusted import shown  # noqa: PLC0415
    from gpuplane.infra.verify import report  # noqa: PLC0415

    if not out_given:  # the project's .gpuplane/ is private: 0700 folders, never through a link
        from gpuplane.infra import kubeaccess  # noqa: PLC0415

        kubeaccess.private_folders(project.root / paths.STATE_DIR, out_dir)
    written: tuple[Path, Path] | None = None
    try:
        written = report.write(result, out_dir)
    except OSError as exc:  # the report still reaches the terminal, with what was left behind
        error(f"cannot write the report into {out_dir}: {exc.strerror or exc}")
    if json_output:
        typer.echo(json.dumps(report.document(result), indent=2, sort_keys=True))
    else:
        console(stderr=False, wide=True).print(report.table(result))
    line = report.summary_line(result)
    err.print(styled((line, "green" if result.ok else "bold red")))
    for kept in result.kept:
        err.print(f"kept: {shown(kept)}", soft_wrap=True)
    for problem in result.cleanup_problems:
        err.print(styled(("left behind:", "red"), " ", shown(problem)), soft_wrap=True)
    if result.remove:
        err.print("Remove with:" if len(result.remove) == 1 else "Remove them with:")
        for remove in result.remove:
            err.print(f"  {shown(remove)}", soft_wrap=True)
    if written is not None:
        err.print(f"Wrote {written[0]} and {written[1]}", soft_wrap=True)


def _cluster(source: Source, timeout: tuple[float, float] | None = None) -> Any:
    from gpuplane.infra.verify.cluster import KubeCluster  # noqa: PLC0415

    return KubeCluster.from_kubeconfig(source, *([timeout] if timeout else []))


def _aws(config: StackConfig, profile: str | None) -> Any:
    from gpuplane.infra.verify.aws import StackAws  # noqa: PLC0415

    def session() -> Any:
        # Imported at the first AWS call: boto3 and the teardown module it shares retries with take a second to
        # load, which a run of cluster checks alone (`--only nodes`) never needs.
        from gpuplane.infra.aws.session import stack_session  # noqa: PLC0415

        return stack_session(config.region, profile or config.profile, config.assume_roles)

    return StackAws(config, session)


def _objects(cluster: Any, expect: Expectations, run_id: str) -> Any:
    from gpuplane.infra.verify.model import Objects  # noqa: PLC0415
    from gpuplane.manifests import verify as probes  # noqa: PLC0415

    return Objects(cluster, probes.probe_namespace(run_id, expect.kubernetes_version), probes.standing_objects(run_id))
