"""What the helper execs: the command itself, tensorflow_model_server's flags, and user precedence."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests import tools
from tests.runtime._support import HELPER, FakeHost, base_env, parse_lines, run_helper, shell_params

# A stand-in for tensorflow_model_server: prints its argv, one per line, then its thread env.
FAKE_SERVER = """#!/bin/sh
for a in "$@"; do printf 'ARG %s\\n' "$a"; done
printf 'ENV TF_NUM_INTRAOP_THREADS=%s\\n' "${TF_NUM_INTRAOP_THREADS-unset}"
"""


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    h = FakeHost(tmp_path / "host")
    h.v2("/")
    h.affinity("0-7")
    return h


@pytest.fixture
def server(tmp_path: Path) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    path = bindir / "tensorflow_model_server"
    path.write_text(FAKE_SERVER)
    path.chmod(0o755)
    return path


def serve(
    host: FakeHost, server: Path, args: Sequence[str], shell: Sequence[str] = ("sh",), **env: str
) -> tuple[list[str], str]:
    """Run ``tensorflow_model_server ARGS`` through the helper; the argv the server got, and stdout."""
    full = base_env(**host.env, **env)
    full["PATH"] = f"{server.parent}:{full['PATH']}"
    done = run_helper(["tensorflow_model_server", *args], full, shell)
    assert done.returncode == 0, done.stderr
    argv = [line[4:] for line in done.stdout.splitlines() if line.startswith("ARG ")]
    return argv, done.stdout


USER_ARGS = ["--port=8500", "--rest_api_port=8501", "--model_name=resnet", "--model_base_path=/models/resnet"]


@pytest.mark.parametrize("shell", shell_params())
def test_flags_appended_under_a_quota(host: FakeHost, server: Path, shell: Sequence[str]) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    argv, out = serve(host, server, USER_ARGS, shell, GPUPLANE_GPU_MEMORY_FRACTION="0.5")
    assert argv == [
        *USER_ARGS,
        "--tensorflow_intra_op_parallelism=3",
        "--tensorflow_inter_op_parallelism=1",
        "--rest_api_num_threads=12",  # 4 x ceil(2.5): TF Serving's own formula, on the container's CPUs
        "--grpc_max_threads=12",
        "--per_process_gpu_memory_fraction=0.5",
    ]
    assert "ENV TF_NUM_INTRAOP_THREADS=3" in out


def test_absolute_path_to_the_server_is_recognized(host: FakeHost, server: Path) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "100000 100000\n")
    done = run_helper([str(server), "--port=8500"], base_env(**host.env))
    argv = [line[4:] for line in done.stdout.splitlines() if line.startswith("ARG ")]
    assert argv == [
        "--port=8500",
        "--tensorflow_intra_op_parallelism=1",
        "--tensorflow_inter_op_parallelism=1",
        "--rest_api_num_threads=4",
        "--grpc_max_threads=4",
    ]


def test_no_thread_flags_without_an_effective_limit(host: FakeHost, server: Path) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "max 100000\n")
    argv, out = serve(host, server, USER_ARGS, GPUPLANE_GPU_MEMORY_FRACTION="1")
    assert argv == [*USER_ARGS, "--per_process_gpu_memory_fraction=1"]
    assert "ENV TF_NUM_INTRAOP_THREADS=unset" in out


@pytest.mark.parametrize(
    "user_flag",
    [
        "--tensorflow_intra_op_parallelism=6",
        "--tensorflow_inter_op_parallelism=6",
        "--rest_api_num_threads=6",
        "--grpc_max_threads=6",
        "--per_process_gpu_memory_fraction=0.9",
        "-grpc_max_threads=6",  # single-dash flags count too
    ],
)
def test_user_flags_win(host: FakeHost, server: Path, user_flag: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    argv, _ = serve(host, server, ["--port=8500", user_flag], GPUPLANE_GPU_MEMORY_FRACTION="0.25")
    name = user_flag.lstrip("-").split("=")[0]
    assert [a for a in argv if a.lstrip("-").split("=")[0] == name] == [user_flag]
    assert len(argv) == 6  # port, the user's flag, and the four others


def test_user_thread_env_suppresses_the_matching_flag(host: FakeHost, server: Path) -> None:
    """TF Serving's flags override TF_NUM_*: adding ours would silently defeat the user's variable."""
    host.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    argv, out = serve(host, server, ["--port=8500"], TF_NUM_INTRAOP_THREADS="5")
    assert argv == [
        "--port=8500",
        "--tensorflow_inter_op_parallelism=1",
        "--rest_api_num_threads=12",
        "--grpc_max_threads=12",
    ]
    assert "ENV TF_NUM_INTRAOP_THREADS=5" in out


def test_other_commands_get_their_args_unchanged(host: FakeHost) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    done = run_helper(["printf", "%s|", "a b", "--x", "", "*"], base_env(**host.env))
    assert done.stdout == "a b|--x||*|"


def test_double_dash_ends_options(host: FakeHost) -> None:
    done = run_helper(["--", "printf", "%s", "--print"], base_env(**host.env))
    assert done.returncode == 0
    assert done.stdout == "--print"


def test_exec_replaces_the_helper(host: FakeHost) -> None:
    """The command runs as the helper's own process (signals from the kubelet reach it directly)."""
    proc = subprocess.Popen(
        ["sh", str(HELPER), "sh", "-c", "echo $$"],
        env=base_env(**host.env),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out, _ = proc.communicate(timeout=30)
    assert int(out) == proc.pid


def test_exit_status_of_the_command_is_kept(host: FakeHost) -> None:
    assert run_helper(["sh", "-c", "exit 7"], base_env(**host.env)).returncode == 7


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TF_NUM_INTRAOP_THREADS", "7"),
        ("TF_NUM_INTEROP_THREADS", "3"),
        ("OMP_NUM_THREADS", "4"),
        ("MALLOC_ARENA_MAX", "8"),
        ("MALLOC_ARENA_MAX", ""),  # set to empty is still set by the user
        ("PYTHON_CPU_COUNT", "16"),
    ],
)
def test_user_variables_win(host: FakeHost, name: str, value: str) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    done = run_helper(["env"], base_env(**host.env, **{name: value}))
    seen = parse_lines(done.stdout)
    assert seen[name] == value
    others = {"TF_NUM_INTRAOP_THREADS": "3", "TF_NUM_INTEROP_THREADS": "1", "MALLOC_ARENA_MAX": "2"}
    for other, expected in others.items():
        if other != name:
            assert seen[other] == expected


@pytest.mark.parametrize(
    ("env", "growth"),
    [
        ({"GPUPLANE_GPU_SHARED": "true"}, "true"),
        ({"GPUPLANE_GPU_SHARED": "1"}, "true"),
        ({"GPUPLANE_GPU_SHARED": "false"}, None),
        ({"GPUPLANE_GPU_MEMORY_FRACTION": "0.3"}, "true"),  # a share below 1 means shared
        ({"GPUPLANE_GPU_MEMORY_FRACTION": ".25"}, "true"),
        ({"GPUPLANE_GPU_MEMORY_FRACTION": "1.0"}, None),
        ({"GPUPLANE_GPU_SHARED": "true", "TF_FORCE_GPU_ALLOW_GROWTH": "false"}, "false"),  # the user's wins
        ({}, None),
    ],
)
def test_gpu_allow_growth(host: FakeHost, env: dict[str, str], growth: str | None) -> None:
    done = run_helper(["--print"], base_env(**host.env, **env))
    assert parse_lines(done.stdout).get("TF_FORCE_GPU_ALLOW_GROWTH") == growth


def test_help_documents_every_input() -> None:
    done = run_helper(["--help"], base_env())
    assert done.returncode == 0
    for name in [
        "GPUPLANE_CPU_LIMIT_MILLICORES",
        "GPUPLANE_MEMORY_LIMIT_BYTES",
        "GPUPLANE_GPU_SHARED",
        "GPUPLANE_GPU_MEMORY_FRACTION",
        "GPUPLANE_TF_ROLES",
        "GPUPLANE_TF_JOB_NAME",
        "GPUPLANE_TF_SERVICE",
        "GPUPLANE_TF_NAMESPACE",
        "GPUPLANE_TF_PORT",
        "JOB_COMPLETION_INDEX",
        "GPUPLANE_CGROUP_ROOT",
        "GPUPLANE_PROC_ROOT",
        "--print",
    ]:
        assert name in done.stdout


def test_no_command_is_a_usage_error() -> None:
    done = run_helper([], base_env())
    assert done.returncode == 2
    assert "no command to run" in done.stderr
    assert "Usage:" in done.stderr


def test_print_execs_nothing(host: FakeHost, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = run_helper(["--print", "touch", str(marker)], base_env(**host.env))
    assert done.returncode == 0
    assert not marker.exists()
    assert parse_lines(done.stdout)["MALLOC_ARENA_MAX"] == "2"


def test_script_is_posix_sh_only() -> None:
    """The helper must run in images without bash: checkbashisms-style spot checks plus shellcheck."""
    text = HELPER.read_text()
    assert text.startswith("#!/bin/sh\n")
    for bashism in ("[[", "local ", "function ", "$'", "<<<", "declare ", "${!", "source "):
        assert bashism not in text, bashism
    assert os.access(HELPER, os.R_OK)


@pytest.mark.tool("shellcheck")
def test_shellcheck_clean() -> None:
    """shellcheck in POSIX sh mode finds nothing (.ci/tools installs it)."""
    done = subprocess.run(
        [tools.need("shellcheck"), "-s", "sh", str(HELPER)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


def test_verbose_summary_before_exec(host: FakeHost) -> None:
    host.write("/sys/fs/cgroup/cpu.max", "150000 100000\n")
    done = run_helper(["printf", "ran"], base_env(**host.env, GPUPLANE_VERBOSE="1"))
    assert done.stdout == "ran"
    assert "cpu limit 1500m (" in done.stderr
    assert "usable cpus 8" in done.stderr
    assert "intra=2 inter=1" in done.stderr
