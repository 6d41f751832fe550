"""The `gpuplane` command line: offline render, the config schema, and the AWS operations around a stack.

Start-up matters (`gpuplane --help`, `--version`, the kubeconfig's `gpuplane token` on every kubectl call):
this module and the command modules it registers import only typer and the standard library at import;
each command imports what it needs (render and Pulumi, boto3, the Kubernetes client) when it runs.
`tests/infra/test_cli_startup.py` keeps it so, `benchmarks/startup.py` measures it.

Every command that reads a stack finds its project the same way (`infra/project.py`, options in
`infra/options.py`). A command of its own module registers itself here (`train`, `queue`, `compare`).
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuplane.infra import compare as compare_command
from gpuplane.infra import queue as queue_command
from gpuplane.infra import train as train_command
from gpuplane.infra.options import (
    EXIT_FAILED,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    cluster_failed,
    console,
    error,
    load_or_exit,
    looked_up,
    project_or_exit,
    refuse,
    styled,
)
from gpuplane.infra.verify import command as verify_command

if TYPE_CHECKING:
    from rich.table import Table

    from gpuplane.infra.aws import janitor as janitor_ops
    from gpuplane.infra.aws.session import AwsError
    from gpuplane.infra.config import StackConfig


def _flag_type(original: Any) -> Any:
    """Typer's type column for an option, empty for a flag: typer 0.29 shows `<bool>`, yet a flag takes no value."""

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else original(self, ctx)

    return display_type_rich


typer.core.TyperOption.display_type_rich = _flag_type(typer.core.TyperOption.display_type_rich)  # type: ignore[method-assign]

app = typer.Typer(
    help="gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplane {_dist_version()}")
        raise typer.Exit()


def _dist_version() -> str:
    import gpuplane  # noqa: PLC0415

    return str(gpuplane.__version__)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components."""


@app.command()
def render(
    stack: StackArgument,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=looked_up,
            help="Output folder, taken as given (relative to the current folder). Default: build/<stack> in the "
            "project, whatever the current folder. A render replaces only what a render wrote there (plan.json, "
            "tfplan.json, cost.json, stack.md, manifests/, helm/, observability/); other files stay.",
        ),
    ] = None,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Render STACK offline: plan.json, tfplan.json, cost.json, manifests/, helm/, observability/, stack.md, a summary.

    Renders gpuplane's own program, or any Pulumi Python program (the project's `main`) built from its
    components. Exits 2 on invalid config or invalid component arguments, writing nothing.
    """
    if _ONE_COMMAND_PROCESS:
        # The process ends with this render: no cyclic garbage collection at all, from before its imports. The
        # collector would walk the SDKs' millions of new objects over and over and free little (the cycles a
        # render leaves are tens of MB): a seventh of a render's CPU, measured (benchmarks/RESULTS.md).
        gc.disable()
    from gpuplane.infra import mockrun, outdir, tfplan  # noqa: PLC0415 - Pulumi loads only when a command runs
    from gpuplane.infra import project as paths  # noqa: PLC0415
    from gpuplane.infra import render as renderer  # noqa: PLC0415
    from gpuplane.infra.config import ConfigError, stack_short_name  # noqa: PLC0415

    nothing = "Nothing was rendered."
    project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
    try:
        stack_short_name(stack)
    except ConfigError as exc:
        raise refuse(exc.problems, "Invalid stack name:", nothing=nothing) from None
    target = out or paths.render_dir(project, stack)
    problem = outdir.forbidden(target, project_root=project.root, stacks_dir=project.stacks_dir)
    problem = problem or renderer.out_dir_problem(target)
    if problem:
        raise refuse([problem], "Refusing the output directory:", nothing=nothing)
    console_out = None if json_output else console(stderr=False, wide=True)
    try:
        entry = paths.program_file(project)
        if entry is None:
            config = load_or_exit(stack, project, nothing=nothing)
            for warning in config.warnings:  # renders, but cannot work once deployed
                console().print(styled(("warning:", "yellow"), " ", warning), soft_wrap=True)
            result = renderer.write(config, target, console_out)
        else:
            result = renderer.write_program(project, stack, target, console_out)
    except tfplan.UnmappedTypeError as exc:  # a resource left out of tfplan.json would escape the scan
        error(str(exc), "Cannot write tfplan.json:")
        console().print(nothing)
        raise typer.Exit(EXIT_FAILED) from None
    except (ConfigError, mockrun.UnansweredInvoke) as exc:
        problems = exc.problems if isinstance(exc, ConfigError) else [str(exc)]
        raise refuse(problems, f"Cannot render stack '{stack}' ({project.root}):", nothing=nothing) from None
    if json_output:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
        # Also in the JSON; said on stderr for a person (a program's own warnings: the stack's were said above).
        logged = result.get("warnings", []) if entry is not None else []
        for warning in [*logged, *result.get("endOfSupport", [])]:
            console().print(styled(("warning:", "yellow"), " ", warning), soft_wrap=True)


train_command.register(app)  # `gpuplane train`: submits training runs (infra/train.py)
queue_command.register(app)  # `gpuplane queue`: the training queue's runs (infra/queue.py)
compare_command.register(app)  # `gpuplane compare`: load-tests serving variants (infra/compare.py)
verify_command.register(app)  # `gpuplane verify`: probes the running cluster (infra/verify/)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the `gpuplane:` stack config (each top-level property is one config key)."""
    from gpuplane.infra.docs import config_schema  # noqa: PLC0415 - the config models load only when needed

    # The same document docs/config-reference.md is generated from (python -m gpuplane.infra.docs).
    typer.echo(json.dumps(config_schema(), indent=2, sort_keys=True))


# --- AWS operations -----------------------------------------------------------------------------------

_ProfileOption = Annotated[
    str | None, typer.Option(help="AWS profile. Default: the stack's aws:profile, else the environment's.")
]
# `token` takes no stack: its profile is the one named, else the environment's (AWS_PROFILE, the default).
_TokenProfileOption = Annotated[
    str | None, typer.Option(help="AWS profile. Default: the environment's (AWS_PROFILE, else the default profile).")
]


def _session(config: StackConfig, profile: str | None) -> Any:
    """The stack's identity: `--profile` if given, else its `aws:profile`; then its `aws:assumeRoles`."""
    from gpuplane.infra.aws.session import stack_session  # noqa: PLC0415 - boto3 loads only when needed

    return stack_session(config.region, profile or config.profile, config.assume_roles)


def _fail(failure: AwsError) -> typer.Exit:
    """Print an AWS failure as one message and its fix (never a traceback); the caller raises the result."""
    error(failure.message)
    if failure.fix:
        console().print(styled(("Fix:", "bold"), " ", failure.fix), soft_wrap=True)
    return typer.Exit(EXIT_FAILED)


_STATUS_STYLE = {"pass": ("pass", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "bold red")}


@app.command()
def preflight(
    stack: StackArgument,
    json_output: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    profile: _ProfileOption = None,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Check the account before `pulumi up`: credentials, region, AZ offerings, vCPU quotas, AMIs, EFS.

    Exits 1 if any check fails (warnings do not fail), 2 on invalid stack config.
    """
    from rich.table import Table  # noqa: PLC0415

    from gpuplane.infra.aws import preflight as preflight_ops  # noqa: PLC0415
    from gpuplane.infra.aws.session import AwsError  # noqa: PLC0415

    nothing = "Nothing was checked."
    config = load_or_exit(stack, project_or_exit(project_dir, stacks_dir, nothing=nothing), nothing=nothing)
    err = console()
    try:
        session = _session(config, profile)
    except AwsError as exc:
        raise _fail(exc) from None
    if json_output:
        checks = preflight_ops.run(config, session)
    else:
        with err.status("preflight") as status:
            checks = preflight_ops.run(config, session, progress=lambda name: status.update(f"checking {name}"))
    failed = [c for c in checks if c.status == "fail"]
    if json_output:
        document = {
            "stack": stack,
            "region": config.region,
            "clusterName": config.cluster_name,
            "ok": not failed,
            "checks": [c.as_dict() for c in checks],
        }
        typer.echo(json.dumps(document, indent=2))
    else:
        table = Table(title=f"preflight: stack {stack} ({config.cluster_name}, {config.region})")
        for column in ("check", "result", "detail", "fix"):
            table.add_column(column, overflow="fold")
        for check in checks:
            table.add_row(check.name, styled(_STATUS_STYLE[check.status]), check.detail, check.fix)
        console(stderr=False, wide=True).print(table)
        warned = sum(c.status == "warn" for c in checks)
        summary = f"{len(checks) - len(failed) - warned} passed, {warned} warnings, {len(failed)} failed"
        err.print(
            styled((f"{summary}; fix the failures before `pulumi up`.", "bold red"))
            if failed
            else styled((f"{summary}.", "green"))
        )
    if failed:
        raise typer.Exit(EXIT_FAILED)


@app.command()
def token(
    cluster: Annotated[str, typer.Option("--cluster", help="EKS cluster name.")],
    region: Annotated[
        str | None, typer.Option(help="Region. Default: AWS_REGION, else AWS_DEFAULT_REGION, else the profile's.")
    ] = None,
    profile: _TokenProfileOption = None,
    role_arn: Annotated[
        list[str] | None,
        typer.Option(
            "--role-arn",
            metavar="ARN",
            help="Role to assume (repeat for a chain: each assumed with the credentials of the one before).",
        ),
    ] = None,
) -> None:
    """Print an ExecCredential with an EKS bearer token (a kubeconfig `exec` plugin; no AWS CLI needed)."""
    if _ONE_COMMAND_PROCESS:
        # kubectl starts this before every call it makes, and it ends after one signature: no cyclic garbage
        # collection, which would walk boto3's new modules while they load and free nothing (a fifth of its CPU).
        gc.disable()
    from gpuplane.components.facts import partition  # noqa: PLC0415 - botocore's data, loaded with boto3 here
    from gpuplane.infra.aws import token as token_ops  # noqa: PLC0415
    from gpuplane.infra.aws.session import AwsError, make_session, stack_session  # noqa: PLC0415

    said = "--region" if region else next((n for n in ("AWS_REGION", "AWS_DEFAULT_REGION") if os.environ.get(n)), None)
    try:
        resolved = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        session = make_session(resolved, profile)
        resolved = resolved or session.region_name
        if resolved:
            try:
                partition.of_region(resolved)  # the STS host the token is signed for depends on it
            except ValueError as exc:
                where = said or "the profile's region"
                raise refuse(
                    [f"{where}: {exc}; allowed: an AWS region such as us-west-2, cn-north-1 or us-gov-west-1"],
                    "Cannot make a token:",
                    nothing="No token was printed.",
                ) from None
        if role_arn and resolved:
            session = stack_session(resolved, profile, tuple(role_arn))
        if not resolved:
            raise AwsError("no AWS region for the token", "Pass --region or set AWS_REGION")
        if session.get_credentials() is None:
            raise AwsError(
                "no AWS credentials found",
                "Set AWS_PROFILE (after `aws sso login`) or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
            )
        credential = token_ops.exec_credential(session, cluster, resolved)
    except AwsError as exc:
        raise _fail(exc) from None
    typer.echo(json.dumps(credential))


@app.command()
def kubeconfig(
    stack: StackArgument,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=looked_up,
            help="Where to write it, taken as given (relative to the current folder). Default: "
            ".gpuplane/<stack>/kubeconfig in the project (never inside a render's folder).",
        ),
    ] = None,
    profile: _ProfileOption = None,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Write a kubeconfig for STACK's live cluster whose credentials come from `gpuplane token`."""
    from gpuplane.infra import kubeaccess  # noqa: PLC0415
    from gpuplane.infra import project as paths  # noqa: PLC0415
    from gpuplane.infra.aws import kubeconfig as kubeconfig_ops  # noqa: PLC0415
    from gpuplane.infra.aws.session import AwsError  # noqa: PLC0415

    nothing = "Nothing was written."
    project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
    config = load_or_exit(stack, project, nothing=nothing)
    try:
        document = kubeconfig_ops.for_cluster(
            _session(config, profile),
            config.cluster_name,
            config.region,
            profile=profile or config.profile,
            role_arns=config.assume_roles,
        )
    except AwsError as exc:
        raise _fail(exc) from None
    path = out or paths.kubeconfig_path(project, stack)
    try:
        # 0600 in 0700 folders from the start, never through a link, with the record that lets `train`,
        # `queue` and `compare` trust it later (infra/kubeaccess.py).
        kubeaccess.write(
            path,
            kubeconfig_ops.dump(document),
            config.cluster_name,
            project_state=None if out else project.root / paths.STATE_DIR,
        )
    except kubeaccess.KubeError as exc:
        raise cluster_failed(exc, None, nothing=nothing) from None
    except OSError as exc:
        raise refuse([f"{exc.filename or path}: {exc.strerror or exc}"], "Cannot write the kubeconfig:") from None
    console().print(
        f"Wrote {path}. gpuplane's commands read it from there; for kubectl: export KUBECONFIG={path.resolve()}",
        soft_wrap=True,
    )


@app.command()
def janitor(
    stack: StackArgument,
    *,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--delete", help="List only (default), or delete after a confirmation.")
    ] = True,
    yes: Annotated[bool, typer.Option("--yes", help="Delete without asking (CI has no stdin).")] = False,
    volumes: Annotated[
        bool | None,
        typer.Option(
            "--volumes/--no-volumes", help="Include detached claim volumes. Default: yes for dev, never prod."
        ),
    ] = None,
    timeout: Annotated[int, typer.Option(help="Seconds to wait for deletions to finish.")] = 900,
    profile: _ProfileOption = None,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Find what Kubernetes left in STACK's VPC (by the cluster's tags only) and, with --delete, remove it."""
    from gpuplane.infra.aws import janitor as janitor_ops  # noqa: PLC0415
    from gpuplane.infra.aws.session import AwsError  # noqa: PLC0415

    nothing = "Nothing was deleted."
    config = load_or_exit(stack, project_or_exit(project_dir, stacks_dir, nothing=nothing), nothing=nothing)
    include_volumes = volumes if volumes is not None else config.platform.profile != "prod"
    err = console()
    try:
        session = _session(config, profile)
        with err.status(f"scanning stack {stack}"):
            found = janitor_ops.plan(config, session, include_volumes=include_volumes)
    except AwsError as exc:
        raise _fail(exc) from None
    console(stderr=False, wide=True).print(_janitor_table(found), soft_wrap=True)
    if found.vpc_id is None:
        err.print(f"No VPC tagged gpuplane:stack={stack} in {config.region}; only volumes were looked for.")
    if found.blocked:
        err.print(styled((found.blocked, "yellow")), soft_wrap=True)
    orphans = found.findings.orphans
    if dry_run:
        err.print(f"Dry run: nothing deleted. {len(orphans)} to delete; run with --delete to remove them.")
        return
    if not orphans:
        err.print("Nothing to delete.")
        return
    if found.blocked:
        raise typer.Exit(EXIT_FAILED)
    if not yes:
        if not sys.stdin.isatty():
            error("no --yes and no terminal to ask on.", "Not deleting:")
            raise typer.Exit(EXIT_FAILED)
        if not typer.confirm(f"Delete these {len(orphans)} resources of {config.cluster_name}?", default=False):
            err.print("Nothing deleted.")
            raise typer.Exit(EXIT_FAILED)
    try:
        outcome = janitor_ops.execute(found, session, timeout_s=timeout, log=lambda m: err.print(m, soft_wrap=True))
    except AwsError as exc:
        raise _fail(exc) from None
    err.print(
        f"Deleted {len(outcome.deleted)}, already gone {len(outcome.already_gone)}, left {len(outcome.remaining)}."
    )
    for orphan, why in outcome.remaining:
        err.print(styled("  ", ("left", "red"), f" {orphan.kind} {orphan.id}: {why}"), soft_wrap=True)
    if outcome.remaining:
        raise typer.Exit(EXIT_FAILED)


def _janitor_table(found: janitor_ops.Plan) -> Table:
    from rich.table import Table  # noqa: PLC0415

    config = found.config
    title = f"janitor: stack {config.stack} ({config.cluster_name}, {found.vpc_id or 'no VPC'}, {config.region})"
    # As wide as its title (Rich wraps a title at the table's width; the console's width still caps it).
    table = Table(title=title, min_width=len(title))
    for column in ("action", "kind", "id", "name", "identified by"):
        table.add_column(column, overflow="fold")
    for orphan in found.findings.orphans:
        table.add_row(styled(("delete", "red")), orphan.kind, orphan.id, orphan.name, orphan.reason)
    for orphan, why in found.findings.kept:
        table.add_row(styled(("keep", "green")), orphan.kind, orphan.id, f"{orphan.name} ({why})", orphan.reason)
    return table


def main() -> None:
    """The `gpuplane` console script: the app, with the exit codes of docs/commands.md, "Exit codes".

    Ctrl-C is 130: typer turns the KeyboardInterrupt into `Exit(130)` after it unwinds, so `finally` blocks run
    (a render removes its staging folder) and a command that catches it (verify cleans up what it created and
    reports) still does (tests/infra/test_exit_codes.py).
    """
    global _ONE_COMMAND_PROCESS  # noqa: PLW0603 - set once, by the console script only
    _ONE_COMMAND_PROCESS = True
    app()


_ONE_COMMAND_PROCESS = False
"""True when this process runs one command and exits (the console script), not when a test invokes the app."""

if __name__ == "__main__":  # pragma: no cover
    main()
