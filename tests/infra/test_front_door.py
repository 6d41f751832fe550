"""Every class of bad input: exit 2, the key path and value named, nothing written, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplane.infra import config
from gpuplane.infra.cli import app
from tests import shipped

runner = CliRunner()
GOOD = shipped.DEV
GROUP = "  gpuplane:nodeGroups:\n    - {name: system, instanceTypes: [m6i.large]%s}\n"


def _render(tmp_path: Path, text: str | bytes) -> tuple[int, str, Path]:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    path = stacks / "Pulumi.bad.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", "bad", "--out", str(out), "--stacks-dir", str(stacks)])
    return result.exit_code, result.output, out


REGION = "config:\n  aws:region: us-west-2\n"
BASE = REGION + "  gpuplane:cluster: {endpointPublicAccess: false}\n"
CASES: dict[str, tuple[str | bytes, list[str]]] = {
    "not-utf8": (b"config:\n  aws:region: us-west-2\n  gpuplane:tags: {team: \xff\xfe}\n", ["not UTF-8", "0xff"]),
    "utf16": ("config:\n  aws:region: us-west-2\n".encode("utf-16"), ["UTF-16"]),
    "too-big": (BASE + "#" * (config.MAX_FILE_BYTES + 1), ["bytes", str(config.MAX_FILE_BYTES)]),
    "billion-laughs": (
        BASE
        + "  x:\n    a: &a [1,1,1,1,1,1,1,1,1,1]\n"
        + "".join(
            f"    {chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
            f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
            for i in range(8)
        ),
        ["expands to more than", "YAML nodes"],
    ),
    "infinity": (
        BASE + "  gpuplane:storage:\n    provisionedThroughputMibps: .inf\n",
        ["gpuplane:storage.provisionedThroughputMibps", "inf"],
    ),
    "long-list": (
        BASE + "  gpuplane:tags: {" + ", ".join(f"k{i}: v" for i in range(300)) + "}\n",
        ["gpuplane:tags", "300 entries"],
    ),
    "cluster-name-pattern": (
        BASE + "  gpuplane:clusterName: -bad\n",
        ["gpuplane:clusterName", "'-bad'", "does not match"],
    ),
    "cluster-name-role": (
        BASE + "  gpuplane:clusterName: " + "c" * 60 + "\n",
        ["gpuplane:clusterName", "IAM role name", "64"],
    ),
    "label-too-long": (
        BASE + GROUP % (", labels: {team: " + "v" * 64 + "}"),
        ["gpuplane:nodeGroups[0].labels.team", "64 characters", "1 to 63"],
    ),
    "taint-too-long": (
        BASE
        + GROUP % (", taints: [{key: team, value: " + "v" * 64 + "}]")
        + "    - {name: gpu2, instanceTypes: [m6i.large]}\n",
        ["gpuplane:nodeGroups[0].taints[0].value", "0 to 63"],
    ),
    "too-many-tags": (
        BASE + "  gpuplane:tags: {" + ", ".join(f"k{i}: v" for i in range(49)) + "}\n",
        ["gpuplane:tags", "51", "at most 50"],
    ),
    "tag-key-too-long": (BASE + "  gpuplane:tags: {" + "k" * 129 + ": v}\n", ["gpuplane:tags.kkk", "1 to 128"]),
    "too-many-azs": (
        BASE + "  gpuplane:network:\n    availabilityZones: [" + ", ".join(f"us-west-2{z}" for z in "abcdefg") + "]\n",
        ["gpuplane:network.availabilityZones", "no AWS region has more than 6"],
    ),
    "volume-size-zero": (
        BASE + "  gpuplane:storage:\n    volumes: [{name: data, size: 0Gi}]\n",
        ["gpuplane:storage.volumes[0].size", "'0Gi' is zero"],
    ),
    "no-namespace": (BASE + "  profile: dev\n", ["profile: has no namespace", "gpuplane:profile"]),
    "namespace-typo": (BASE + "  gpuplan:profile: dev\n", ["gpuplan:profile", "typo of 'gpuplane'"]),
    "config-spelling": (
        BASE + "  gpuplane:config:profile: prod\n",
        ["gpuplane:config:profile", "reads this as gpuplane:profile"],
    ),
    "top-level-key": ("gpuplane:profile: dev\n" + BASE, ["top-level key 'gpuplane:profile'", "under 'config:'"]),
    "duplicate-key": (
        BASE + "  gpuplane:profile: dev\n  gpuplane:profile: prod\n",
        ["'gpuplane:profile' appears twice"],
    ),
    # The stack file read as the engine reads it (infra/stackyaml.py, yaml.v3 and Pulumi's config code).
    "timestamp": (
        BASE + "  gpuplane:tags:\n    expires: 2027-03-01\n",
        ["line 5, column 14", "gpuplane:tags.expires", "2027-03-01 00:00:00 +0000 UTC", "quote it: '2027-03-01'"],
    ),
    "explicit-tag": (BASE + '  gpuplane:tags: {team: !!int "two"}\n', ["gpuplane:tags.team", "!!int"]),
    "nul-byte": (BASE + "  gpuplane:tags: {team: a\x00b}\n", ["line 4, column 26", "U+0000"]),
    "terminal-colour": (BASE + "  gpuplane:tags: {team: \x1b[31mred}\n", ["line 4, column 25", "U+001B"]),
    "huge-integer": (
        BASE + "  gpuplane:storage: {provisionedThroughputMibps: " + "9" * 5000 + "}\n",
        ["gpuplane:storage.provisionedThroughputMibps"],
    ),
    "rounded-integer": (
        BASE + "  gpuplane:storage: {provisionedThroughputMibps: 123456789012345678901234}\n",
        ["gpuplane:storage.provisionedThroughputMibps", "rounds to 1.2345678901234569e+23"],
    ),
    "prod-open-cidr-set": (
        REGION + "  gpuplane:profile: prod\n  gpuplane:cluster:\n    endpointPublicAccess: true\n"
        "    publicAccessCidrs: [0.0.0.0/1, 128.0.0.0/1]\n",
        ["gpuplane:cluster.publicAccessCidrs", "whole internet"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_naming_the_key_and_writes_nothing(tmp_path, case):
    text, expected = CASES[case]
    code, output, out = _render(tmp_path, text)
    flat = " ".join(output.split())
    assert code == 2, output
    for fragment in expected:
        assert fragment in flat, (fragment, output)
    assert "Traceback" not in output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stacks"]


def test_every_problem_is_reported_at_once(tmp_path):
    text = (
        BASE
        + "  gpuplan:profile: dev\n  gpuplane:clusterName: -x\n"
        + GROUP % (", labels: {a: " + "v" * 64 + ", b: " + "w" * 64 + "}")
    )
    code, output, _ = _render(tmp_path, text)
    flat = " ".join(output.split())
    assert code == 2
    for fragment in ("gpuplan:profile", "gpuplane:clusterName", "labels.a", "labels.b"):
        assert fragment in flat, fragment


def test_engine_path_applies_the_same_rules():
    raw = config.from_engine_strings(
        {"aws:region": "us-west-2", "gpuplane:storage": '{"provisionedThroughputMibps": Infinity}', "profile": "dev"}
    )
    with pytest.raises(config.ConfigError) as caught:
        config.parse(raw, "dev")
    text = "\n".join(caught.value.problems)
    assert "gpuplane:storage.provisionedThroughputMibps: inf is not a finite number" in text
    assert "profile: has no namespace" in text


@pytest.mark.parametrize("stack", ["..", "../prod", "/etc/passwd", "a/b/c/d", "a/../b"])
def test_stack_names_the_engine_refuses_are_refused(tmp_path, stack):
    result = runner.invoke(app, ["render", stack, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "is not one the engine accepts" in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("stack", ["dev", "org/dev", "org/gpuplane/dev"])
def test_qualified_stack_names_read_the_short_file(stack):
    assert config.stack_file(stack, Path("stacks")) == Path("stacks/Pulumi.dev.yaml")


def test_out_holding_files_a_render_would_replace_is_refused_and_kept(tmp_path):
    keep = tmp_path / "plan.json"
    keep.write_text("precious")
    (tmp_path / "manifests").mkdir()
    result = runner.invoke(app, ["render", "dev", "--out", str(tmp_path)])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "holds plan.json, manifests, which no gpuplane render wrote" in text
    assert "Nothing was deleted" in text
    assert keep.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifests", "plan.json"]


def test_a_render_keeps_every_file_it_did_not_write(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "kubeconfig").write_text("mine")  # e.g. written there by an older gpuplane: it must not block
    assert runner.invoke(app, ["render", "dev", "--out", str(out)]).exit_code == 0
    (out / "notes").mkdir()
    (out / "notes" / "review.md").write_text("also mine")
    (out / "manifests" / "stale.yaml").write_text("a render's own folder: replaced")
    result = runner.invoke(app, ["render", "dev", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "kubeconfig").read_text() == "mine"
    assert (out / "notes" / "review.md").read_text() == "also mine"
    assert not (out / "manifests" / "stale.yaml").exists()
    assert (out / "plan.json").is_file() and (out / ".gpuplane-render").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name != "r"]  # no staging folder left behind


def test_previous_render_is_replaced_and_json_summary_matches_plan(tmp_path):
    out = tmp_path / "r"
    assert runner.invoke(app, ["render", "dev", "--out", str(out)]).exit_code == 0
    assert (out / ".gpuplane-render").is_file()
    result = runner.invoke(app, ["render", "dev", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    plan = json.loads((out / "plan.json").read_text())
    counts = facts["counts"]
    assert counts["resources"] == len(plan["resources"])
    assert counts["cloud"] == sum(r["custom"] for r in plan["resources"])
    assert counts["components"] == counts["resources"] - counts["cloud"]
    assert {g["name"] for g in facts["nodeGroups"]} == {"system", "gpu"}


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("gpuplane ")


def test_words_yaml_1_1_calls_booleans_are_text_as_for_the_engine(tmp_path):
    """`yes`, `on`, `off`, `No`, `y`, `1:30` and an impossible date are strings for yaml.v3: kept as written."""
    words = ["yes", "on", "off", "No", "y", "1:30", "2024-02-30", "017"]
    text = BASE + "  gpuplane:tags: {" + ", ".join(f"k{i}: {w}" for i, w in enumerate(words)) + "}\n"
    code, output, out = _render(tmp_path, text)
    assert code == 2  # only for 017: the engine reads an integer (15) where a tag value must be text
    assert "gpuplane:tags.k7" in output and "k0" not in output and "k6" not in output
    text = text.replace(", k7: 017", "")
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(text)
    result = runner.invoke(app, ["render", "bad", "--out", str(out), "--stacks-dir", str(tmp_path / "stacks")])
    assert result.exit_code == 0, result.output
    tags = json.loads((out / "plan.json").read_text())["config"]["gpuplane:tags"]
    assert tags == {f"k{i}": w for i, w in enumerate(words[:-1])}


def test_a_cidr_without_a_prefix_is_refused_as_the_provider_refuses_it(tmp_path):
    text = REGION + "  gpuplane:cluster:\n    publicAccessCidrs: [1.2.3.4]\n"
    code, output, out = _render(tmp_path, text)
    flat = " ".join(output.split())
    assert code == 2, output
    assert "gpuplane:cluster.publicAccessCidrs" in flat and "'1.2.3.4/32'" in flat and "no prefix length" in flat
    assert not out.exists()


def test_a_documentation_range_renders_with_a_warning_naming_the_key(tmp_path):
    text = REGION + "  gpuplane:cluster:\n    publicAccessCidrs: [8.8.8.8/32, 203.0.113.0/24]\n"
    code, output, out = _render(tmp_path, text)
    flat = " ".join(output.split())
    assert code == 0, output
    assert "warning: gpuplane:cluster.publicAccessCidrs[1]: 203.0.113.0/24 is no internet address (203.0.113.0" in flat
    # said once: the stack's warning, not again as the Cluster component's Pulumi warning of the same text
    assert flat.count("warning: gpuplane:cluster.publicAccessCidrs[1]") == 1
    assert "documentation range" in flat and "[0]" not in flat.split("warning: gpuplane")[1].split("documentation")[0]
    assert (out / "plan.json").is_file()


@pytest.mark.parametrize("command", [["render", "dev"], ["preflight", "dev"], ["verify", "dev", "--plan"]])
def test_a_bad_gpuplane_today_is_refused_as_the_environments_before_any_stack_is_read(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The date rules read GPUPLANE_TODAY deep in validation; refused first, it is not blamed on a stack key."""
    monkeypatch.setenv("GPUPLANE_TODAY", "tomorrow")
    result = runner.invoke(app, [*command, "--stacks-dir", str(shipped.STACKS)])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[:2] == [
        "Invalid environment:",
        "  - GPUPLANE_TODAY='tomorrow' is not a date like 2026-11-24; allowed: YYYY-MM-DD, or unset it to judge by "
        "today's date",
    ]
    assert "gpuplane:cluster" not in result.output
    assert runner.invoke(app, [command[0], "--help"]).exit_code == 0  # help needs no date
