"""The `gpuplane` command line: offline render and the config schema (more verbs join as they land)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from components.config import PlatformArgs
from infra import config as stack_config
from infra import render as renderer

app = typer.Typer(
    help="gpuplane: a GPU-ready EKS platform for TensorFlow, as Pulumi components.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
_err = Console(stderr=True)

EXIT_INVALID_CONFIG = 2


def _load_or_exit(stack: str, stacks_dir: Path) -> stack_config.StackConfig:
    try:
        return stack_config.load(stack, stacks_dir)
    except stack_config.ConfigError as exc:
        path = stack_config.stack_file(stack, stacks_dir)
        _err.print(f"[bold red]Invalid config for stack '{stack}'[/] ({path}):", soft_wrap=True)
        for problem in exc.problems:
            _err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
        _err.print("Nothing was rendered or created.")
        raise typer.Exit(EXIT_INVALID_CONFIG) from None


@app.command()
def render(
    stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
    out: Annotated[Path | None, typer.Option(help="Output directory. Default: build/<stack>")] = None,
    stacks_dir: Annotated[Path, typer.Option(help="Where the stack files are.")] = stack_config.STACKS_DIR,
) -> None:
    """Render STACK offline: plan.json, manifests/, helm/ and stack.md, plus a summary table."""
    config = _load_or_exit(stack, stacks_dir)
    renderer.write(config, out or Path("build") / stack, Console(width=max(Console().width, 140)))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the `gpuplane:` stack config (each top-level property is one config key)."""
    document = PlatformArgs.model_json_schema(by_alias=True)
    document["title"] = "gpuplane stack config (keys under the gpuplane: namespace)"
    typer.echo(json.dumps(document, indent=2, sort_keys=True))


if __name__ == "__main__":  # pragma: no cover
    app()
