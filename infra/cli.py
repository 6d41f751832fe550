"""The `gpuplane` command line: offline render, the config schema, and the AWS operations around a stack."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gpuplane.components.config import PlatformArgs
from gpuplane.infra import compare as compare_ops
from gpuplane.infra import config as stack_config
from gpuplane.infra import mockrun, tfplan
from gpuplane.infra import queue as queue_command
from gpuplane.infra import render as renderer
from gpuplane.infra import train as train_command
from gpuplane.infra.aws import janitor as janitor_ops
from gpuplane.infra.aws import kubeconfig as kubeconfig_ops
from gpuplane.infra.aws import preflight as preflight_ops
from gpuplane.infra.aws import token as token_ops
from gpuplane.infra.aws.session import AwsError, make_session, stack_session

app = typer.Typer(
    help="gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
_err = Console(stderr=True)

EXIT_INVALID_CONFIG = 2
EXIT_FAILED = 1


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuplane {_dist_version()}")
        raise typer.Exit()


def _dist_version() -> str:
    try:
        return importlib.metadata.version("gpuplane")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown (not installed)"


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components."""


_ProjectOption = Annotated[
    Path | None, typer.Option("--project", help="Folder of the Pulumi.yaml. Default: nearest one from here upward.")
]
_StacksDirOption = Annotated[
    Path | None, typer.Option(help="Where the stack files are. Default: the project's stackConfigDir.")
]


def _refuse(problems: list[str], title: str) -> typer.Exit:
    _err.print(f"[bold red]{title}[/]", soft_wrap=True, highlight=False)
    for problem in problems:
        _err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
    _err.print("Nothing was rendered or created.")
    return typer.Exit(EXIT_INVALID_CONFIG)


def _project_or_exit(project_dir: Path | None, stacks_dir: Path | None) -> stack_config.Project:
    """The Pulumi project, found the way the engine finds it; `--stacks-dir` overrides its stack folder."""
    try:
        if project_dir is not None:
            path = project_dir / "Pulumi.yaml"
            if not path.is_file():
                raise stack_config.ConfigError([f"--project: {project_dir} holds no Pulumi.yaml"])
            project = stack_config.read_project(path)
        else:
            found = stack_config.find_project(Path.cwd())
            if found is None and stacks_dir is None:
                raise stack_config.ConfigError(
                    [
                        f"no Pulumi.yaml in {Path.cwd()} or above; run from a Pulumi project, "
                        "or pass --project DIR or --stacks-dir DIR"
                    ]
                )
            project = found or stack_config.Project(
                root=Path.cwd(), name=stack_config.PROJECT, stacks_dir=Path.cwd(), main=Path(__file__).parent
            )
    except stack_config.ConfigError as exc:
        raise _refuse(exc.problems, "Cannot find the Pulumi project:") from None
    return dataclasses.replace(project, stacks_dir=stacks_dir) if stacks_dir is not None else project


def _load_or_exit(
    stack: str, stacks_dir: Path | None = None, project_dir: Path | None = None
) -> stack_config.StackConfig:
    project = _project_or_exit(project_dir, stacks_dir)
    try:
        return stack_config.load(stack, project.stacks_dir, project.name, project.config)
    except stack_config.ConfigError as exc:
        raise _refuse(exc.problems, f"Invalid config for stack '{stack}' ({project.stacks_dir}):") from None


@app.command()
def render(
    stack: Annotated[str, typer.Argument(help="Stack name (dev, org/dev, org/project/dev): Pulumi.<name>.yaml")],
    out: Annotated[
        Path | None, typer.Option(help="Output directory (replaced only if it holds a render). Default: build/<stack>")
    ] = None,
    stacks_dir: _StacksDirOption = None,
    project_dir: _ProjectOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Render STACK offline: plan.json, tfplan.json, manifests/, helm/ and stack.md, plus a summary table."""
    project = _project_or_exit(project_dir, stacks_dir)
    try:
        short = stack_config.stack_short_name(stack)
    except stack_config.ConfigError as exc:
        raise _refuse(exc.problems, "Invalid stack name:") from None
    target = out or Path("build") / short
    problem = renderer.out_dir_problem(target)
    if problem:
        raise _refuse([problem], "Refusing the output directory:")
    try:
        if project.is_gpuplane:
            config = _load_or_exit(stack, project.stacks_dir, project_dir)
            result = renderer.write(config, target, None if json_output else _wide())
        else:
            result = renderer.write_program(project, stack, target, None if json_output else _wide())
    except tfplan.UnmappedTypeError as exc:  # a resource left out of tfplan.json would escape the scan
        _err.print(f"[bold red]Cannot write tfplan.json:[/] {exc}", soft_wrap=True)
        _err.print("Nothing was rendered.")
        raise typer.Exit(EXIT_FAILED) from None
    except (stack_config.ConfigError, mockrun.UnansweredInvoke) as exc:
        problems = exc.problems if isinstance(exc, stack_config.ConfigError) else [str(exc)]
        raise _refuse(problems, f"Cannot render stack '{stack}':") from None
    if json_output:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))


def _wide() -> Console:
    return Console(width=max(Console().width, 140))


train_command.register(app)  # `gpuplane train`: submits training runs (infra/train.py)
queue_command.register(app)  # `gpuplane queue`: the training queue's runs (infra/queue.py)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the `gpuplane:` stack config (each top-level property is one config key)."""
    document = PlatformArgs.model_json_schema(by_alias=True)
    document["title"] = "gpuplane stack config (keys under the gpuplane: namespace)"
    typer.echo(json.dumps(document, indent=2, sort_keys=True))


# --- AWS operations -----------------------------------------------------------------------------------

_ProfileOption = Annotated[
    str | None, typer.Option(help="AWS profile. Default: the stack's aws:profile, else the environment's.")
]


def _session(config: stack_config.StackConfig, profile: str | None) -> Any:
    """The stack's identity: `--profile` if given, else its `aws:profile`; then its `aws:assumeRoles`."""
    return stack_session(config.region, profile or config.profile, config.assume_roles)


def _fail(error: AwsError) -> typer.Exit:
    """Print an AWS failure as one message and its fix (never a traceback); the caller raises the result."""
    _err.print(f"[bold red]Error:[/] {error.message}", soft_wrap=True, highlight=False)
    if error.fix:
        _err.print(f"[bold]Fix:[/] {error.fix}", soft_wrap=True, highlight=False)
    return typer.Exit(EXIT_FAILED)


_STATUS_STYLE = {"pass": "[green]pass[/]", "warn": "[yellow]warn[/]", "fail": "[bold red]FAIL[/]"}


@app.command()
def preflight(
    stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    profile: _ProfileOption = None,
    stacks_dir: _StacksDirOption = None,
    project_dir: _ProjectOption = None,
) -> None:
    """Check the account before `pulumi up`: credentials, region, AZ offerings, vCPU quotas, AMIs, EFS.

    Exits 1 if any check fails (warnings do not fail), 2 on invalid stack config.
    """
    config = _load_or_exit(stack, stacks_dir, project_dir)
    try:
        session = _session(config, profile)
    except AwsError as exc:
        raise _fail(exc) from None
    if json_output:
        checks = preflight_ops.run(config, session)
    else:
        with _err.status("preflight") as status:
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
            table.add_row(check.name, _STATUS_STYLE[check.status], check.detail, check.fix)
        Console(width=max(Console().width, 140)).print(table)
        warned = sum(c.status == "warn" for c in checks)
        summary = f"{len(checks) - len(failed) - warned} passed, {warned} warnings, {len(failed)} failed"
        _err.print(
            f"[bold red]{summary}; fix the failures before `pulumi up`.[/]" if failed else f"[green]{summary}.[/]"
        )
    if failed:
        raise typer.Exit(EXIT_FAILED)


@app.command()
def token(
    cluster: Annotated[str, typer.Option("--cluster", help="EKS cluster name.")],
    region: Annotated[str | None, typer.Option(help="Region. Default: AWS_REGION / the profile's.")] = None,
    profile: _ProfileOption = None,
    role_arn: Annotated[
        list[str] | None, typer.Option("--role-arn", help="Role to assume (repeat for a chain, like aws:assumeRoles).")
    ] = None,
) -> None:
    """Print an ExecCredential with an EKS bearer token (a kubeconfig `exec` plugin; no AWS CLI needed)."""
    try:
        resolved = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        session = make_session(resolved, profile)
        resolved = resolved or session.region_name
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
    stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
    out: Annotated[Path | None, typer.Option(help="Where to write it. Default: build/<stack>/kubeconfig")] = None,
    profile: _ProfileOption = None,
    stacks_dir: _StacksDirOption = None,
    project_dir: _ProjectOption = None,
) -> None:
    """Write a kubeconfig for STACK's live cluster whose credentials come from `gpuplane token`."""
    config = _load_or_exit(stack, stacks_dir, project_dir)
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
    path = out or Path("build") / stack / "kubeconfig"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(kubeconfig_ops.dump(document))
    path.chmod(0o600)
    _err.print(f"Wrote {path}. Use it with: export KUBECONFIG={path.resolve()}", highlight=False, soft_wrap=True)


@app.command()
def janitor(
    stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
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
    stacks_dir: _StacksDirOption = None,
    project_dir: _ProjectOption = None,
) -> None:
    """Find what Kubernetes left in STACK's VPC (by the cluster's tags only) and, with --delete, remove it."""
    config = _load_or_exit(stack, stacks_dir, project_dir)
    include_volumes = volumes if volumes is not None else config.platform.profile != "prod"
    try:
        session = _session(config, profile)
        with _err.status(f"scanning stack {stack}"):
            found = janitor_ops.plan(config, session, include_volumes=include_volumes)
    except AwsError as exc:
        raise _fail(exc) from None
    console = Console(width=max(Console().width, 140))
    console.print(_janitor_table(found), soft_wrap=True)
    if found.vpc_id is None:
        _err.print(f"No VPC tagged gpuplane:stack={stack} in {config.region}; only volumes were looked for.")
    if found.blocked:
        _err.print(f"[yellow]{found.blocked}[/]", soft_wrap=True, highlight=False)
    orphans = found.findings.orphans
    if dry_run:
        _err.print(f"Dry run: nothing deleted. {len(orphans)} to delete; run with --delete to remove them.")
        return
    if not orphans:
        _err.print("Nothing to delete.")
        return
    if found.blocked:
        raise typer.Exit(EXIT_FAILED)
    if not yes:
        if not sys.stdin.isatty():
            _err.print("[bold red]Not deleting:[/] no --yes and no terminal to ask on.")
            raise typer.Exit(EXIT_FAILED)
        if not typer.confirm(f"Delete these {len(orphans)} resources of {config.cluster_name}?", default=False):
            _err.print("Nothing deleted.")
            raise typer.Exit(EXIT_FAILED)
    try:
        outcome = janitor_ops.execute(found, session, timeout_s=timeout, log=lambda m: _err.print(m, highlight=False))
    except AwsError as exc:
        raise _fail(exc) from None
    _err.print(
        f"Deleted {len(outcome.deleted)}, already gone {len(outcome.already_gone)}, left {len(outcome.remaining)}."
    )
    for orphan, why in outcome.remaining:
        _err.print(f"  [red]left[/] {orphan.kind} {orphan.id}: {why}", highlight=False, soft_wrap=True)
    if outcome.remaining:
        raise typer.Exit(EXIT_FAILED)


def _janitor_table(found: janitor_ops.Plan) -> Table:
    config = found.config
    table = Table(
        title=f"janitor: stack {config.stack} ({config.cluster_name}, {found.vpc_id or 'no VPC'}, {config.region})"
    )
    for column in ("action", "kind", "id", "name", "identified by"):
        table.add_column(column, overflow="fold")
    for orphan in found.findings.orphans:
        table.add_row("[red]delete[/]", orphan.kind, orphan.id, orphan.name, orphan.reason)
    for orphan, why in found.findings.kept:
        table.add_row("[green]keep[/]", orphan.kind, orphan.id, f"{orphan.name} ({why})", orphan.reason)
    return table


app.command(name="compare")(compare_ops.command)


if __name__ == "__main__":  # pragma: no cover
    app()
