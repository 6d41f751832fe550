"""The config package: one import name over modules split by concern, public names only."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import gpuplane.components.config as config
from gpuplane.components.config import (
    cluster,
    common,
    gpu,
    network,
    node_groups,
    platform,
    queue,
    storage,
    workloads,
)

# The public names the package has offered since `components/config.py` became a package, and those added
# since (the queue's settings, the several-errors exception). Private helpers are not re-exported: each
# stays in the module that uses it. Node repair's settings. The node groups' upgrade order.
PUBLIC_NAMES = (
    "AmiType", "AutoscalerArgs", "CapacityReservationArgs", "CapacityType", "ClusterArgs",
    "EFS_BASE_PATH_MAX_COMPONENTS", "EFS_PATH_MAX_CHARS", "EFS_UNIQUE_SUFFIX_CHARS", "FieldError", "FieldErrors",
    "GpuSharingArgs", "LOG_RETENTION_DAYS", "LogType", "MAX_AZS_PER_REGION", "MigArgs", "MpsArgs", "NatMode",
    "NetworkArgs", "NodeGroupArgs", "ObservabilityArgs", "POSIX_ID_MAX", "POSIX_ID_MIN", "PlatformArgs", "Profile",
    "QueueArgs", "ReservationPreference", "ServingArgs", "StorageArgs", "Taint", "TaintEffect", "TimeSlicingArgs",
    "TrainingArgs", "VolumeArgs",
    "NodeRepairArgs", "RepairAction", "RepairOverrideArgs",
    "NodeUpgradeOrder",
)  # fmt: skip


def test_the_package_offers_its_public_names_and_no_private_one():
    missing = [name for name in PUBLIC_NAMES if not hasattr(config, name)]
    assert missing == []
    assert sorted(config.__all__) == sorted(PUBLIC_NAMES)
    assert [name for name in config.__all__ if name.startswith("_")] == []
    private = [name for name in vars(config) if name.startswith("_") and not name.startswith("__")]
    assert private == []


def test_each_args_class_lives_in_its_concern_module():
    assert config.NetworkArgs is network.NetworkArgs
    assert config.ClusterArgs is cluster.ClusterArgs
    assert config.NodeGroupArgs is node_groups.NodeGroupArgs
    assert config.Taint is node_groups.Taint
    assert config.GpuSharingArgs is gpu.GpuSharingArgs
    assert config.StorageArgs is storage.StorageArgs
    assert config.VolumeArgs is storage.VolumeArgs
    assert config.PlatformArgs is platform.PlatformArgs
    assert config.QueueArgs is queue.QueueArgs
    assert config.ServingArgs is workloads.ServingArgs
    assert config.TrainingArgs is workloads.TrainingArgs
    assert config.LOG_RETENTION_DAYS is common.LOG_RETENTION_DAYS


FIRST_IMPORTS = [
    *(f"config.{m}" for m in ("platform", "node_groups", "storage", "gpu", "network", "cluster", "common")),
    *(f"config.{m}" for m in ("queue", "workloads", "base")),
    *(f"plan.{m}" for m in ("gpu_nodes", "placement", "training_queue", "cross_checks", "names", "node_template")),
    *(f"facts.{m}" for m in ("catalog", "partition", "subnets", "name_limits")),
    "destroy.teardown",
]

# One interpreter that has loaded no module of gpuplane's forks a child per module, and the child imports that
# module first. The parent loads the third-party packages they all use (pydantic, PyYAML, botocore), once, so
# the children share them: an import loop is between gpuplane's own modules, whatever else is loaded.
_FORK_EACH = """
import json, os, sys, traceback
import botocore.session, pydantic, yaml
assert not [name for name in sys.modules if name.startswith("gpuplane")]
failed = {}
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
            code = 0
        except BaseException:
            os.write(write, traceback.format_exc().encode())
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read) as why:
        text = why.read()
    if os.waitpid(pid, 0)[1] != 0:
        failed[name] = text or "the child failed without a traceback"
print(json.dumps(failed))
"""


def _first_imports(names: list[str], env: dict[str, str] | None = None) -> dict[str, str]:
    """Run the harness on `names`: the traceback of each module that failed to import first."""
    done = subprocess.run(
        [sys.executable, "-c", _FORK_EACH, *names], capture_output=True, text=True, check=True, timeout=300, env=env
    )
    failures: dict[str, str] = json.loads(done.stdout)
    return failures


def test_importing_any_module_first_works():
    """Each module imports on its own in a fresh interpreter: no order of imports is needed to break a loop.

    One test for all the modules, not one per module: the harness forks every child from one parent either way,
    and a test per module made each xdist worker that ran one of them run the whole harness again. A failure
    names each module that failed, with its traceback."""
    failures = _first_imports([f"gpuplane.components.{module}" for module in FIRST_IMPORTS])
    assert failures == {}, "\n\n".join(f"{name}:\n{why}" for name, why in failures.items())


def test_a_module_that_fails_on_first_import_is_reported_with_its_traceback(tmp_path):
    # The same harness, on a package whose first module imports a second that imports the first back by name.
    package = tmp_path / "loopy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loopy.b import B\nA = 1\n")
    (package / "b.py").write_text("from loopy.a import A\nB = 2\n")
    failures = _first_imports(
        ["loopy.a", "json"], {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    )
    assert list(failures) == ["loopy.a"]
    assert "ImportError: cannot import name 'A' from partially initialized module 'loopy.a'" in failures["loopy.a"]
