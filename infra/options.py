"""What every `gpuplane` command shares: the project options, the exit codes, and how a refusal is printed.

Why apart from `infra/cli.py`: commands live in their own modules (`train`, `compare`, and later ones such
as a queue command) and register themselves on the app; they take `--project`/`--stacks-dir` with the same
meaning and report bad input the same way, so those come from here. This module stays light (typer and
pathlib at import; config, rich and the rest inside the functions) because `gpuplane --help` and
`--version` import every command module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from gpuplane.infra.config import Project, StackConfig

EXIT_INVALID_CONFIG = 2
EXIT_FAILED = 1

ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Folder of the project's Pulumi.yaml. Default: the nearest Pulumi.yaml from the current folder upward.",
    ),
]
StacksDirOption = Annotated[
    Path | None,
    typer.Option("--stacks-dir", help="Folder of the stack files. Default: the project's stackConfigDir."),
]
# train, compare and queue read the kubeconfig `gpuplane kubeconfig` wrote for the stack, unless told otherwise.
KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        help="Taken as given (relative to the current folder). Default: .gpuplane/<stack>/kubeconfig in the "
        "project (from `gpuplane kubeconfig`)."
    ),
]
StackArgument = Annotated[
    str, typer.Argument(help="Stack name (dev, org/dev, org/project/dev): the project's Pulumi.<name>.yaml.")
]

_console: dict[bool, Any] = {}


def console(*, stderr: bool = True, wide: bool = False) -> Console:
    """A rich console (stderr by default; `wide`: at least 140 columns, for tables), made on first use."""
    from rich.console import Console  # noqa: PLC0415 - rich costs start-up time that --help does not need

    if wide:
        return Console(width=max(Console().width, 140))
    if stderr not in _console:
        _console[stderr] = Console(stderr=stderr)
    made: Console = _console[stderr]
    return made


def refuse(problems: list[str], title: str, *, nothing: str = "Nothing was created.") -> typer.Exit:
    """Print a refusal (a title, one line per problem, what was not done); the caller raises the exit 2."""
    err = console()
    err.print(f"[bold red]{title}[/]", soft_wrap=True, highlight=False)
    for problem in problems:
        err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
    err.print(nothing, highlight=False)
    return typer.Exit(EXIT_INVALID_CONFIG)


def project_or_exit(
    project_dir: Path | None, stacks_dir: Path | None, *, nothing: str = "Nothing was created."
) -> Project:
    """The project (infra/project.py: `locate`), or exit 2 naming why there is none."""
    from gpuplane.infra import project  # noqa: PLC0415
    from gpuplane.infra.config import ConfigError  # noqa: PLC0415

    try:
        return project.locate(project_dir, stacks_dir)
    except ConfigError as exc:
        raise refuse(exc.problems, "Cannot find the Pulumi project:", nothing=nothing) from None


def load_or_exit(stack: str, project: Project, *, nothing: str = "Nothing was created.") -> StackConfig:
    """STACK's validated config in `project`, or exit 2 with every problem (the folder it was read from)."""
    from gpuplane.infra import config  # noqa: PLC0415

    try:
        return config.load(stack, project.stacks_dir, project.name, project.config)
    except config.ConfigError as exc:
        raise refuse(
            exc.problems, f"Invalid config for stack '{stack}' ({project.stacks_dir}):", nothing=nothing
        ) from None
