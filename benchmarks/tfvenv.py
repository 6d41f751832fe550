"""The TensorFlow venv of the TensorFlow-marked tests and the thread benchmarks, made in one place.

TensorFlow CPU is installed into ``benchmarks/.cache/tfvenv-<version>`` (git-ignored), not into the project
venv: it is 1.6 GB and only these tests and benchmarks need it. Three callers share it:

- ``make check`` makes it at the start, beside the other venvs (``python3 benchmarks/tfvenv.py``), so the
  download and install wait on the network and disk while the other installs do, not inside the tests;
- the tests' ``tf_python`` fixture, which finds it made or makes it (``make test`` alone, a single test);
- ``benchmarks/threads.py`` and ``threads_training.py``.

Two of them may start at once (pytest-xdist runs the TensorFlow test modules in parallel workers), so the
check-and-make runs under an exclusive lock on ``<venv>.lock``: one makes it, the other waits and finds it
ready. Standard library only: it runs with any Python 3.11 before the project venv exists.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

# The CPU image's TensorFlow (manifests/versions.py `TENSORFLOW_CPU`); Renovate moves this line with it.
TF_VERSION = "2.21.0"
VENV = Path(__file__).resolve().parent / ".cache" / f"tfvenv-{TF_VERSION}"
# pip may build nothing here (wheels only), but a slow mirror can take minutes for the 600 MB of wheels.
INSTALL_TIMEOUT_S = 1200
# Written into the venv once TensorFlow imported from it (`venv --clear` removes it with the rest).
MARKER = ".gpuplane-tensorflow-imports"


class TFVenvError(Exception):
    """The venv could not be made; the message says which step failed and ends with its output."""


def python_of(venv: Path = VENV) -> Path:
    """The venv's interpreter."""
    return venv / "bin" / "python"


def ready(venv: Path = VENV) -> bool:
    """Whether the venv imports the pinned TensorFlow (a half-made or older venv is not ready).

    Once TensorFlow has been seen importing, a marker in the venv records it, so that later checks (each
    `make test` asks) cost a file read instead of TensorFlow's import, several seconds of CPU.
    """
    python, marker = python_of(venv), venv / MARKER
    if not python.exists():
        return False
    if marker.is_file() and marker.read_text().strip() == TF_VERSION:
        return True
    probe = [str(python), "-c", f"import tensorflow as t; assert t.__version__ == {TF_VERSION!r}"]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    if subprocess.run(probe, env=env, capture_output=True, check=False).returncode != 0:
        return False
    marker.write_text(f"{TF_VERSION}\n")
    return True


def ensure(venv: Path = VENV, *, base_python: str = sys.executable) -> Path:
    """The venv's python, made first when it does not import the pinned TensorFlow.

    Raises TFVenvError (with pip's or venv's own words) when it cannot be made: no venv module, no wheel for
    this platform, no network.
    """
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready(venv):
            return python_of(venv)
        print(f"installing tensorflow-cpu=={TF_VERSION} into {venv} ...", file=sys.stderr)
        venv_argv = [base_python, "-m", "venv", "--clear", str(venv)]
        made = subprocess.run(venv_argv, capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise TFVenvError(f"cannot create a venv for TensorFlow: {(made.stdout + made.stderr)[-800:]}")
        pip = [str(python_of(venv)), "-m", "pip", "install", "-q", f"tensorflow-cpu=={TF_VERSION}"]
        try:
            done = subprocess.run(pip, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise TFVenvError(f"pip install tensorflow-cpu=={TF_VERSION} took over {exc.timeout:.0f} s") from exc
        if done.returncode != 0:
            raise TFVenvError(f"pip cannot install tensorflow-cpu=={TF_VERSION} here: {done.stderr[-800:]}")
        if not ready(venv):
            raise TFVenvError(f"tensorflow-cpu=={TF_VERSION} installed into {venv} but does not import")
        return python_of(venv)


def main(argv: list[str] | None = None) -> int:
    """``python3 benchmarks/tfvenv.py [VENV]``: make the venv (or find it made) and print its python."""
    args = sys.argv[1:] if argv is None else argv
    venv = Path(args[0]).resolve() if args else VENV
    try:
        print(ensure(venv))
    except TFVenvError as exc:
        print(f"benchmarks/tfvenv.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
