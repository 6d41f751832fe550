"""The stack file read as the engine reads it: every row of the yaml.v3 oracle's table, and the reader's errors."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from gpuplane.infra import stackyaml
from tests import tools

HERE = Path(__file__).resolve().parent / "yaml_engine"
TABLE: list[dict[str, Any]] = json.loads((HERE / "table.json").read_text())
GO_YAML = Path("/usr/share/gocode/src/gopkg.in/yaml.v3")
CORE_TAGS = {"!!str", "!!int", "!!float", "!!bool", "!!null", "!!seq", "!!map"}


def _same(ours: Any, engine: Any) -> bool:
    """Equal values of the same JSON type (1 is not 1.0 is not True)."""
    if isinstance(engine, dict):
        return (
            isinstance(ours, dict) and ours.keys() == engine.keys() and all(_same(ours[k], engine[k]) for k in engine)
        )
    if isinstance(engine, list):
        return isinstance(ours, list) and len(ours) == len(engine) and all(map(_same, ours, engine))
    return type(ours) is type(engine) and ours == engine


def _must_refuse(row: dict[str, Any]) -> str | None:
    """Why gpuplane refuses this value, or None when it must read it exactly as the engine does."""
    if "error" in row["nested"]:
        return "the engine stops"
    if row["tag"] not in CORE_TAGS:
        return "the engine rewrites it or ignores its tag"
    plain = row["yaml"].replace("_", "")
    integer = re.fullmatch(r"[-+]?[0-9]+", plain) is not None
    if row["tag"] == "!!float" and integer and json.loads(row["nested"]["text"])["v"] != int(plain):
        return "the engine rounds it"
    return None


def _read(document: str) -> Any:
    return stackyaml.read_text(document, Path("Pulumi.t.yaml"))["config"]["gpuplane:x"]


@pytest.mark.parametrize("row", TABLE, ids=[r["yaml"] or "<empty>" for r in TABLE])
def test_every_value_reads_as_the_engine_reads_it(row):
    top_doc = f"config:\n  gpuplane:x: {row['yaml']}\n"
    nested_doc = f"config:\n  gpuplane:x:\n    v: {row['yaml']}\n"
    why = _must_refuse(row)
    if why is not None:
        for document in (top_doc, nested_doc):
            with pytest.raises(stackyaml.StackFileError) as refused:
                _read(document)
            message = refused.value.problems[0]
            assert message.startswith("Pulumi.t.yaml: line "), message
            assert "gpuplane:x" in message, message
        return
    assert _same(
        stackyaml.engine_text(_read(top_doc)),
        row["top"]["text"] if not row["top"].get("object") else json.loads(row["top"]["text"]),
    ), (row, _read(top_doc))
    assert _same(_read(nested_doc), json.loads(row["nested"]["text"])), (row, _read(nested_doc))


def test_the_table_covers_the_cases_the_issue_names():
    by_text = {r["yaml"]: r for r in TABLE}
    assert by_text["yes"]["nested"]["text"] == '{"v":"yes"}'
    assert by_text["2027-03-01"]["top"]["text"] == "2027-03-01 00:00:00 +0000 UTC"
    assert by_text["1:30"]["top"]["text"] == "1:30"
    assert by_text["017"]["top"]["text"] == "15"
    assert "error" in by_text[".inf"]["nested"]
    assert "error" in by_text['!!int "two"']["nested"]
    assert len({r["yaml"] for r in TABLE}) == len(TABLE) == len(json.loads((HERE / "cases.json").read_text()))


@pytest.mark.tool("go-yaml")
def test_the_committed_table_is_what_yaml_v3_says(tmp_path):
    shutil.copy(HERE / "oracle.go", tmp_path / "oracle.go")
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOCACHE": str(tmp_path / "cache")}
    subprocess.run(
        [tools.need("go-yaml"), "build", "-o", "oracle", "oracle.go"], cwd=tmp_path, env=env, check=True, timeout=300
    )
    made = subprocess.run(
        [str(tmp_path / "oracle")], input=(HERE / "cases.json").read_bytes(), capture_output=True, check=True
    )
    assert json.loads(made.stdout) == TABLE


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("config:\n  gpuplane:tags: {team: \x00}\n", ["line 2, column 25", "U+0000", "not allowed"]),
        ("config:\n  gpuplane:tags: {team: \x1b[31mred}\n", ["line 2, column 25", "U+001B"]),
        (
            "config:\n  gpuplane:tags:\n    expires: 2027-03-01\n",
            ["line 3, column 14", "gpuplane:tags.expires", "2027-03-01 00:00:00 +0000 UTC", "quote it: '2027-03-01'"],
        ),
        (
            'config:\n  gpuplane:storage: {x: !!int "two"}\n',
            ["gpuplane:storage.x", "cannot decode !!str `two` as a !!int"],
        ),
        ("config:\n  gpuplane:storage: {x: .inf}\n", ["gpuplane:storage.x", "not a finite number"]),
        ("config:\n  gpuplane:x: [1, !!binary aGk=]\n", ["gpuplane:x[1]", "tag !!binary"]),
        ("config:\n  gpuplane:x: {2027-03-01: a}\n", ["gpuplane:x", "quote it"]),
        ("config:\n  gpuplane:x: {a: 1, a: 2}\n", ["'a' appears twice", "first at line 2"]),
        ("config:\n  gpuplane:x: [1,\n", ["line 3, column 1", "not valid YAML"]),
        ("config:\n  gpuplane:x: *nowhere\n", ["not valid YAML", "nowhere"]),
        (
            f"config:\n  gpuplane:x: {'1' * 5000}\n",
            [
                "gpuplane:x: " + "1" * 60 + "… (4940 more characters) is an integer of 5000 digits",
                "it would pass it on as text",
                "(quote it for text)",
            ],
        ),
        ("config:\n  gpuplane:x: {[a]: 1}\n", ["gpuplane:x: a key is a list, not text"]),
        ("config:\n  gpuplane:x: {{a: 1}: 1}\n", ["gpuplane:x: a key is a mapping, not text"]),
        (f'config:\n  gpuplane:x: !!int "{"9" * 900}"\n', ["cannot decode !!str `" + "9" * 60 + "… (840 more"]),
    ],
    ids=[
        "nul",
        "esc",
        "timestamp",
        "bad-tag",
        "inf",
        "binary",
        "date-key",
        "duplicate",
        "unclosed",
        "alias",
        "5000-digits",
        "list-key",
        "mapping-key",
        "huge-tagged",
    ],
)
def test_problems_name_the_line_the_column_and_the_key(tmp_path, text, fragments):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    with pytest.raises(stackyaml.StackFileError) as refused:
        stackyaml.read(path)
    flat = " ".join(" ".join(refused.value.problems).split())
    for fragment in fragments:
        assert fragment in flat, (fragment, flat)
    assert str(path) in flat
    assert "Node(" not in flat and "set_int_max_str_digits" not in flat and len(flat) < 1000


def test_merge_keys_and_own_keys_win():
    document = "base: &b {a: 1, b: 2}\nconfig:\n  gpuplane:x:\n    <<: *b\n    b: 3\n"
    assert stackyaml.read_text(document, Path("p"))["config"]["gpuplane:x"] == {"a": 1, "b": 3}


def test_a_top_level_value_is_the_text_the_program_gets():
    assert [stackyaml.engine_text(v) for v in (None, True, 3, 1.5, 1e-7, "x", [1])] == [
        "",
        "true",
        "3",
        "1.5",
        "1e-7",
        "x",
        [1],
    ]
    assert stackyaml.go_float_text(1e21) == "1e+21"
    assert not math.isnan(stackyaml.json_number(2.0**64))
    assert stackyaml.json_number(2.0**64) == 18446744073709552000


def test_a_file_without_a_size_is_read_with_the_same_bound(tmp_path: Path) -> None:
    """A pipe says size 0 beforehand; what is read from it stops at the bound, then it is refused like a big file."""
    fifo = tmp_path / "Pulumi.yaml"
    os.mkfifo(fifo)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), fifo.open("wb") as pipe:
            pipe.write(b"#" * (stackyaml.MAX_FILE_BYTES + 4096))

    threading.Thread(target=feed, daemon=True).start()
    with pytest.raises(stackyaml.StackFileError) as info:
        stackyaml.read(fifo)
    limit = stackyaml.MAX_FILE_BYTES
    assert info.value.problems == [f"{fifo}: is more than {limit} bytes; allowed: at most {limit} bytes"]
