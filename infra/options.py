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
    from rich.text import Text

    from gpuplane.infra.config import Project, StackConfig
    from gpuplane.infra.kubeaccess import Connection, Source

# The exit codes of every command (docs/commands.md, "Exit codes"; tests/infra/test_exit_codes.py):
EXIT_OK = 0
EXIT_FAILED = 1  # the operation failed: the cluster, AWS, the run itself
EXIT_INVALID_INPUT = 2  # invalid input: config, arguments, a path or file the user named (or must create first)
EXIT_INVALID_CONFIG = EXIT_INVALID_INPUT
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


def looked_up(value: Path | None) -> Path | None:
    """The path a path option names, or a usage error (exit 2) when the system cannot even look it up.

    Why every path option has this callback: `Path.exists()`, `is_dir()` and `is_file()` answer False only for a
    path that is absent; for one the system refuses to look up (a name longer than the file system allows, a
    loop of links) they raise, which ended the command with a traceback instead of naming the option.
    """
    if value is None:
        return None
    try:
        value.stat()
    except (FileNotFoundError, NotADirectoryError):
        return value  # absent: the command says what it needed there
    except OSError as exc:
        from gpuplane.infra.untrusted import shown  # noqa: PLC0415

        raise typer.BadParameter(
            f"{shown(value, 120, one_line=True)}: {exc.strerror}; allowed: a path the system can open"
        ) from None
    return value


ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        callback=looked_up,
        help="Folder of the project's Pulumi.yaml. Default: the nearest Pulumi.yaml from the current folder upward.",
    ),
]
StacksDirOption = Annotated[
    Path | None,
    typer.Option(
        "--stacks-dir", callback=looked_up, help="Folder of the stack files. Default: the project's stackConfigDir."
    ),
]
# train, compare and queue read the kubeconfig `gpuplane kubeconfig` wrote for the stack, unless told otherwise.
KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        callback=looked_up,
        help="Taken as given (relative to the current folder). Default: .gpuplane/<stack>/kubeconfig in the "
        "project (from `gpuplane kubeconfig`).",
    ),
]
StackArgument = Annotated[
    str, typer.Argument(help="Stack name (dev, org/dev, org/project/dev): the project's Pulumi.<name>.yaml.")
]

_console: dict[bool, Any] = {}


def console(*, stderr: bool = True, wide: bool = False) -> Console:
    """A rich console (stderr by default; `wide`: stdout, for tables), made on first use.

    Markup, highlighting and emoji codes are off: every string printed (titles, table cells, statuses) is shown
    as it is, so a path, stack name, run id or server message holding `[/x]` is text, never a style tag, and
    `gpuplane:x:` stays those characters, never an emoji. Our own colours come as `styled(...)` text. Its width
    is the terminal's (or `COLUMNS`): a table printed on it is laid out
    so that no line is wider and no word is broken (`fit`), one record per block when its columns cannot fit.
    """
    if wide:
        return _fitting_console()(markup=False, highlight=False, emoji=False)
    if stderr not in _console:
        from rich.console import Console  # noqa: PLC0415 - rich costs start-up time that --help does not need

        _console[stderr] = Console(stderr=stderr, markup=False, highlight=False, emoji=False)
    made: Console = _console[stderr]
    return made


def _fitting_console() -> type[Console]:
    from rich.console import Console  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    class FittingConsole(Console):
        """A console that prints each table through `fit` at its own width."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            # Wrapped at words, so that no line is wider than the terminal; but a word wider than the terminal
            # (a long path) is printed whole on one line, for the terminal to wrap, never cut in two.
            words = [w for o in objects if isinstance(o, str | Text) for w in str(o).split()]
            kwargs["soft_wrap"] = any(len(w) > self.width for w in words)
            super().print(*(fit(o, self.width) for o in objects), **kwargs)

    return FittingConsole


def fit(renderable: Any, width: int) -> Any:
    """A rich Table laid out for `width` columns without breaking a word; anything else as it is.

    Rich shrinks a table that is too wide by narrowing its widest columns, whatever their words, so a cell
    breaks mid-word (`AL2023_x86_64_NVI|DIA`). Here each column gets at least its longest word and the room
    left goes to the columns with the longest lines; when even the longest words cannot sit side by side, the
    table is printed as one block per row (`header: value` lines), which wraps at spaces.
    """
    from rich.console import Group  # noqa: PLC0415
    from rich.measure import Measurement  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    if not isinstance(renderable, Table) or not renderable.columns:
        return renderable
    from rich.console import Console  # noqa: PLC0415

    measurer = Console(width=10_000, markup=False, highlight=False, emoji=False)
    options = measurer.options
    columns = renderable.columns
    lows, highs = [], []
    for column in columns:
        cells = [column.header, *column.cells]
        sizes = [Measurement.get(measurer, options, cell) for cell in cells if cell is not None]
        lows.append(max((m.minimum for m in sizes), default=1))
        highs.append(max((m.maximum for m in sizes), default=1))
    frame = (len(columns) + 1 if renderable.show_edge else len(columns) - 1) if renderable.box else 0
    room = width - frame - len(columns) * (renderable.padding[1] + renderable.padding[3])
    if sum(lows) > room:
        return _blocks(renderable, Group, Text)
    widths = list(lows)
    spare = room - sum(widths)
    while spare > 0:  # one column at a time to the one furthest below its longest line
        wanting = [i for i, w in enumerate(widths) if w < highs[i]]
        if not wanting:
            break
        i = max(wanting, key=lambda j: highs[j] - widths[j])
        widths[i] += 1
        spare -= 1
    for column, size in zip(columns, widths, strict=True):
        column.width = size
        column.overflow = "fold"
    return renderable


def _blocks(table: Any, group: Any, text: Any) -> Any:
    """The table as one block per row: `header: value` per cell, the first in bold, a blank line between rows."""
    parts: list[Any] = []
    if table.title is not None:
        parts.append(text(str(getattr(table.title, "plain", table.title)), style="bold"))
    headers = [str(getattr(c.header, "plain", c.header)) for c in table.columns]
    rows = [list(c.cells) for c in table.columns]
    for index in range(table.row_count):
        cells = [column[index] if index < len(column) else "" for column in rows]
        parts.append(text(""))
        for number, (header, cell) in enumerate(zip(headers, cells, strict=True)):
            value = cell if isinstance(cell, text) else text(str(cell))
            if value.plain.strip():
                indent = "" if number == 0 else "  "
                parts.append(text.assemble((f"{indent}{header}: ", "bold" if number == 0 else ""), value))
    if table.caption is not None:
        parts += [text(""), text(str(getattr(table.caption, "plain", table.caption)))]
    return group(*parts)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text made of plain parts and (text, style) parts; no part is ever read as markup."""
    from rich.text import Text  # noqa: PLC0415

    return Text.assemble(*parts)


def error(message: str, label: str = "Error:") -> None:
    """Print `label` in bold red and the message on stderr (soft-wrapped: paths stay whole).

    The message often quotes what gpuplane did not write (a server's answer, a file's value): it is shown
    through `untrusted.shown`, control characters visible and its length bounded.
    """
    from gpuplane.infra.untrusted import shown  # noqa: PLC0415

    console().print(styled((label, "bold red"), " ", shown(message)), soft_wrap=True)


def refuse(problems: list[str], title: str, *, nothing: str = "Nothing was created.") -> typer.Exit:
    """Print a refusal (a title, one line per problem, what was not done); the caller raises the exit 2."""
    err = console()
    from gpuplane.infra.untrusted import shown  # noqa: PLC0415

    err.print(styled((shown(title), "bold red")), soft_wrap=True)
    for problem in problems:
        err.print(f"  - {shown(problem)}", soft_wrap=True)
    err.print(nothing)
    return typer.Exit(EXIT_INVALID_CONFIG)


def project_or_exit(
    project_dir: Path | None, stacks_dir: Path | None, *, nothing: str = "Nothing was created."
) -> Project:
    """The project (infra/project.py: `locate`), or exit 2 naming why there is none.

    Every command that reads a stack starts here, so GPUPLANE_TODAY (what-if runs) is checked here too: the date
    rules read it deep inside validation, which would report a bad value as a fault of the stack key they judge.
    """
    from gpuplane.infra import project  # noqa: PLC0415
    from gpuplane.infra.config import ConfigError  # noqa: PLC0415
    from gpuplane.manifests import lifecycle  # noqa: PLC0415

    try:
        lifecycle.today()
    except ValueError as exc:
        raise refuse([str(exc)], "Invalid environment:", nothing=nothing) from None

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
        own = _own_program_problem(stack, project)
        if own:
            raise refuse(
                [own], f"Stack '{stack}' holds no gpuplane settings ({project.root}):", nothing=nothing
            ) from None
        raise refuse(
            exc.problems, f"Invalid config for stack '{stack}' ({project.stacks_dir}):", nothing=nothing
        ) from None


def _own_program_problem(stack: str, project: Project) -> str | None:
    """Why STACK cannot be read as gpuplane's, when its project runs its own program and sets no gpuplane key.

    A team's program may read its platform from `gpuplane:` keys (then every command reads them too), or set its
    components in code, with a stack file of its own keys. For the latter, validating the file as gpuplane's would
    report defaults the program never uses (an empty `gpuplane:cluster.publicAccessCidrs` where the program sets
    its CIDRs in code): the command cannot know that platform, and says so instead.
    """
    from gpuplane.infra import config  # noqa: PLC0415
    from gpuplane.infra import project as paths  # noqa: PLC0415

    try:
        entry = paths.program_file(project)
        keys = {**project.config, **config.read_stack_file(stack, project.stacks_dir)}
    except config.ConfigError:
        return None  # a missing stack or program: the load's own problems say it
    if entry is None or any(str(key).startswith(f"{config.NAMESPACE}:") for key in keys):
        return None
    return (
        f"project '{project.name}' deploys its own program ({entry}), and stack '{stack}' sets no "
        f"{config.NAMESPACE}:* key, so its platform is in the program's code; this command reads the platform "
        f"from a gpuplane stack's settings. Allowed: `gpuplane render {stack}` (runs the program under mocks), or "
        f"give the platform's settings as {config.NAMESPACE}:* keys in the stack file and have the program read "
        f"them (pulumi.Config('{config.NAMESPACE}'), as gpuplane's own program does); the other commands then "
        "read them too"
    )


def cluster_hint(config: StackConfig) -> str:
    """What to do when the stack's API server cannot be reached: depends on whether its endpoint is public."""
    if not config.platform.cluster.endpoint_public_access:
        return (
            "The cluster's API endpoint is private (gpuplane:cluster.endpointPublicAccess is false): run this from "
            "inside the VPC (a runner or bastion there, a VPN or a peered VPC allowed by cluster.apiAccessCidrs)"
        )
    return "Check that the stack is up (`pulumi up`) and that your address is in gpuplane:cluster.publicAccessCidrs"


def kube_source(kubeconfig: Path | None, project: Project, stack: str, config: StackConfig) -> Source:
    """The kubeconfig a cluster command uses (infra/kubeaccess.py): `--kubeconfig`, else the project's own."""
    from gpuplane.infra import project as paths  # noqa: PLC0415
    from gpuplane.infra.config import stack_short_name  # noqa: PLC0415
    from gpuplane.infra.kubeaccess import Source  # noqa: PLC0415

    default = paths.kubeconfig_path(project, stack)
    return Source.of(kubeconfig, default, stack_short_name(stack), config.cluster_name, cluster_hint(config))


def cluster_failed(exc: BaseException, connection: Connection | None, *, nothing: str = "") -> typer.Exit:
    """Print a cluster command's failure as one line; the caller raises the returned exit.

    `exc` is a kubeaccess.KubeError, or a client exception explained through `connection` (anything else is
    re-raised: a bug of ours keeps its traceback). Exit 2 for the kubeconfig, 1 for the cluster.
    """
    from gpuplane.infra import kubeaccess  # noqa: PLC0415

    if not isinstance(exc, kubeaccess.KubeError):
        if connection is None or not kubeaccess.is_client_failure(exc):
            raise exc
        exc = kubeaccess.explain(exc, connection)
    error(str(exc))
    if nothing:
        console().print(nothing)
    return typer.Exit(exc.exit_code)
