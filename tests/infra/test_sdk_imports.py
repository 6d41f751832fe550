"""The lazy pulumi_aws service packages of the render (`infra/sdk_imports.py`): the same names, fewer modules."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import pytest

from gpuplane.infra import mockrun, sdk_imports

# Every pulumi_aws service package gpuplane's components and the example use.
USED = ["ec2", "iam", "eks", "autoscaling", "cloudwatch", "kms", "efs", "vpc", "s3"]

_DESCRIBE = textwrap.dedent(
    """
    import json, sys, types
    {setup}
    import pulumi_aws

    def describe(value):
        if isinstance(value, types.ModuleType):
            return "module " + value.__name__
        return f"{{getattr(value, '__module__', '?')}}.{{getattr(value, '__qualname__', type(value).__name__)}}"

    names = json.loads(sys.argv[1])
    out = {{}}
    for service, wanted in names.items():
        package = getattr(pulumi_aws, service)
        if wanted is None:
            [getattr(package, n) for n in dir(package)]  # load the eager package whole
            wanted = sorted(n for n in dir(package) if not n.startswith("_"))
        out[service] = {{n: describe(getattr(package, n)) for n in wanted}}
    out["loaded"] = len([m for m in sys.modules if m.startswith("pulumi_aws.ec2.")])
    print(json.dumps(out))
    """
)


def _describe(setup: str, names: dict[str, list[str] | None]) -> dict[str, object]:
    script = _DESCRIBE.format(setup=setup)
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(names)], capture_output=True, text=True, check=True, timeout=300
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_every_name_resolves_to_the_object_the_eager_package_binds():
    eager = _describe("", dict.fromkeys(USED))
    names = {service: sorted(eager[service]) for service in USED}  # type: ignore[call-overload]
    lazy = _describe("from gpuplane.infra import sdk_imports; assert sdk_imports.install() > 200", names)
    for service in USED:
        assert lazy[service] == eager[service], service


def test_a_render_loads_only_the_modules_it_uses():
    lazy = _describe(
        "from gpuplane.infra import sdk_imports; sdk_imports.install()",
        {"ec2": ["Vpc", "Subnet", "get_vpc", "LaunchTemplateMetadataOptionsArgs", "outputs"]},
    )
    eager = _describe("", {"ec2": ["Vpc"]})
    assert isinstance(lazy["loaded"], int) and isinstance(eager["loaded"], int)
    assert eager["loaded"] > 180  # the eager package imports every ec2 module
    assert lazy["loaded"] <= 6  # vpc, subnet, get_vpc, _inputs, _enums, outputs
    assert lazy["ec2"] == {
        "Vpc": "pulumi_aws.ec2.vpc.Vpc",
        "Subnet": "pulumi_aws.ec2.subnet.Subnet",
        "get_vpc": "pulumi_aws.ec2.get_vpc.get_vpc",
        "LaunchTemplateMetadataOptionsArgs": "pulumi_aws.ec2._inputs.LaunchTemplateMetadataOptionsArgs",
        "outputs": "module pulumi_aws.ec2.outputs",
    }


def test_only_plain_generated_packages_are_made_lazy():
    plain = "# generated\nimport builtins as _builtins\nfrom .. import _utilities\nimport typing\n"
    assert sdk_imports.star_imports(plain + "from ._enums import *\nfrom .vpc import *\nfrom . import outputs\n") == [
        "_enums",
        "vpc",
    ]
    # pulumi_aws.config swaps its module's class: such a package keeps its own loader.
    assert sdk_imports.star_imports(plain + "import sys\nfrom .vars import _ExportableConfig\n") is None
    assert sdk_imports.declared_exports("import x\n\n__all__ = ['VpcArgs',\n    'Vpc']\n\nclass Vpc: ...") == [
        "VpcArgs",
        "Vpc",
    ]
    assert sdk_imports.declared_exports("class Vpc: ...\n") is None


def test_the_last_star_import_wins(tmp_path):
    for module, exports in {"a": ["Shared", "OnlyA"], "b": ["Shared"]}.items():
        (tmp_path / f"{module}.py").write_text(f"__all__ = {exports!r}\n")
    assert sdk_imports.binding_map(str(tmp_path), ["a", "b"]) == {"Shared": "b", "OnlyA": "a"}
    (tmp_path / "c.py").write_text("x = 1\n")
    assert sdk_imports.binding_map(str(tmp_path), ["a", "c"]) is None


@pytest.mark.parametrize("name", ["NoSuchThing", "__wrapped__"])
def test_an_unknown_name_is_an_attribute_error(name):
    package = sdk_imports.LazyPackage("pulumi_aws.fake")
    package.gpuplane_modules, package.gpuplane_owner = [], {}
    with pytest.raises(AttributeError, match=name):
        getattr(package, name)


# --- the render's collector pause (`mockrun.no_cycle_collection`) ----------------------------------------


@pytest.mark.parametrize("was_enabled", [True, False])
def test_the_collector_is_paused_during_a_render_and_restored_after(was_enabled):
    (gc.enable if was_enabled else gc.disable)()
    try:
        seen: list[bool] = []

        def program() -> dict[str, object]:
            seen.append(gc.isenabled())
            return {}

        mockrun.run(program, "p", "s", "us-west-2")
        assert seen == [False]
        assert gc.isenabled() is was_enabled
        with pytest.raises(RuntimeError), mockrun.no_cycle_collection():
            raise RuntimeError("a failed render")
        assert gc.isenabled() is was_enabled
    finally:
        gc.enable()


@pytest.mark.parametrize(("renders", "frozen"), [(0, False), (2, True)])
def test_a_render_process_exits_without_walking_its_heap_again(renders, frozen):
    # A render registers, once, an exit hook that freezes the heap before the exit's full collection. The
    # check is registered first, so it runs last (atexit runs hooks in reverse order).
    script = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 10000))\n"
        "from gpuplane.infra import mockrun\n"
        f"for _ in range({renders}): mockrun.run(lambda: {{}}, 'p', 's', 'us-west-2')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["frozen", str(frozen)]


# --- the render's skipped stack walk (`mockrun.no_source_positions`) ----------------------------------------


def _one_resource() -> dict[str, object]:
    import pulumi  # noqa: PLC0415 - loaded with mockrun already

    pulumi.CustomResource("gpuplane:test:Thing", "thing", {"size": 1})
    return {}


def test_a_mocked_run_skips_the_sdks_stack_walk_and_restores_it(monkeypatch):
    from pulumi.runtime import resource as sdk_resource  # noqa: PLC0415 - loaded with mockrun already

    walks: list[int] = []
    original = sdk_resource._get_stack_trace

    def counting():
        walks.append(1)
        return original()

    monkeypatch.setattr(sdk_resource, "_get_stack_trace", counting)
    # Without the skip the SDK walks the stack for each registration (so the skip has something to skip;
    # a release that renames the walk fails here instead of silently rendering slower).
    with mockrun.no_cycle_collection():
        mockrun._run(_one_resource, "p", "s", "us-west-2", None)
    assert len(walks) >= 1
    walks.clear()
    recording = mockrun.run(_one_resource, "p", "s", "us-west-2")
    assert walks == []
    assert [r.type for r in recording.resources if r.custom] == ["gpuplane:test:Thing"]
    assert sdk_resource._get_stack_trace is counting
    with pytest.raises(RuntimeError), mockrun.no_source_positions():
        raise RuntimeError("a failed render")
    assert sdk_resource._get_stack_trace is counting
