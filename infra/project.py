"""Which project a command works on, and where its files go: one answer for every command.

Why one module: `render`, `train`, `compare`, `preflight`, `kubeconfig` and `janitor` all read a stack, and
each used to find it (and place its output) its own way, so the same command line read different stack
files, or wrote into different folders, depending on the command and the current folder. Here:

- the project is the nearest `Pulumi.yaml` from the current folder upward (as the Pulumi CLI finds it), or
  `--project DIR`; its stack files are in its `stackConfigDir`, or `--stacks-dir DIR`. Never a folder
  inside the installed package.
- default outputs live in the project, whatever the current folder: renders in `build/<stack>/` (render
  output, replaced by the next render), and what the commands write for the user (kubeconfigs, compare
  reports) in `.gpuplane/<stack>/`, which no render touches. `<stack>` is the short stack name everywhere
  (`org/dev` and `dev` are both `dev`, the file the engine reads: `Pulumi.dev.yaml`).
- paths the user gives (`--out`, `--kubeconfig`, `--project`, `--stacks-dir`) are taken as given, relative
  to the current folder.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpuplane.infra.config import PROJECT, ConfigError, Project, find_project, read_project, stack_short_name

BUILD_DIR = "build"
STATE_DIR = ".gpuplane"
KUBECONFIG_FILE = "kubeconfig"
COMPARE_DIR = "compare"
# gpuplane's own program (`main: infra/` of its Pulumi.yaml): render builds it in-process, with the
# training runs `gpuplane train` would submit, instead of running it as a file.
OWN_PROGRAM = Path(__file__).resolve().parent


def locate(project_dir: Path | None = None, stacks_dir: Path | None = None, cwd: Path | None = None) -> Project:
    """The project a command works on; ConfigError (naming the option) when there is none.

    `project_dir` is `--project` (a folder holding `Pulumi.yaml`), `stacks_dir` is `--stacks-dir` (overrides
    the project's `stackConfigDir`). Without a `Pulumi.yaml`, `--stacks-dir` alone is enough: the project is
    then gpuplane's own program and the current folder its root.
    """
    here = (cwd or Path.cwd()).resolve()
    if project_dir is not None:
        folder = (here / project_dir).resolve()
        path = next((folder / n for n in ("Pulumi.yaml", "Pulumi.yml") if (folder / n).is_file()), None)
        if path is None:
            raise ConfigError([f"--project: {project_dir} holds no Pulumi.yaml; allowed: a Pulumi project folder"])
        project = read_project(path)
    else:
        found = find_project(here)
        if found is None:
            if stacks_dir is None:
                raise ConfigError(
                    [
                        f"no Pulumi.yaml in {here} or above; run from a Pulumi project, "
                        "or pass --project DIR or --stacks-dir DIR"
                    ]
                )
            # No Pulumi.yaml: gpuplane's own program on the given stack files (never a folder found here).
            found = Project(root=here, name=PROJECT, stacks_dir=here, main=OWN_PROGRAM)
        project = found
    project = dataclasses.replace(project, root=project.root.resolve(), main=project.main.resolve())
    if stacks_dir is not None:
        return dataclasses.replace(project, stacks_dir=(here / stacks_dir).resolve())
    return dataclasses.replace(project, stacks_dir=project.stacks_dir.resolve())


def program_file(project: Project) -> Path | None:
    """The consumer program `render` runs (`main`'s `__main__.py`), or None for gpuplane's own program.

    gpuplane's own program is its `infra/` (a checkout), or, for a project named `gpuplane` without a `main`
    folder, the installed one (a copy of `Pulumi.yaml` and `stacks/` next to a wheel). Any other program
    runs as a file whatever its project name; a missing `main` is a ConfigError naming it.
    """
    main = project.main
    if main.is_dir() and main.resolve() == OWN_PROGRAM:
        return None
    if not main.exists():
        if project.name == PROJECT:
            return None
        raise ConfigError(
            [
                f"Pulumi.yaml main: {main} does not exist; allowed: the folder (or .py file) of project "
                f"'{project.name}''s Pulumi program. To render gpuplane's own platform from stack files, name the "
                f"project '{PROJECT}' in {project.root / 'Pulumi.yaml'}"
            ]
        )
    entry = main / "__main__.py" if main.is_dir() else main
    if not entry.is_file():
        raise ConfigError(
            [f"Pulumi.yaml main: {main} has no __main__.py; allowed: a folder with __main__.py, or a .py file"]
        )
    return entry


def render_dir(project: Project, stack: str) -> Path:
    """Default output of `gpuplane render STACK`: `<project>/build/<stack>/` (replaced by each render)."""
    return project.root / BUILD_DIR / stack_short_name(stack)


def state_dir(project: Project, stack: str) -> Path:
    """Where the commands keep the user's files for STACK: `<project>/.gpuplane/<stack>/`, outside any render."""
    return project.root / STATE_DIR / stack_short_name(stack)


def kubeconfig_path(project: Project, stack: str) -> Path:
    """The kubeconfig `gpuplane kubeconfig` writes and `train`/`compare` read by default."""
    return state_dir(project, stack) / KUBECONFIG_FILE


def compare_dir(project: Project, stack: str, run_id: str) -> Path:
    """The report folder of one `gpuplane compare` run."""
    return state_dir(project, stack) / COMPARE_DIR / run_id
