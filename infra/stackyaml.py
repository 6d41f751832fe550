"""A stack file (and `Pulumi.yaml`) read exactly as the Pulumi engine reads it.

Why not plain PyYAML: the engine reads `Pulumi.<stack>.yaml` with Go's gopkg.in/yaml.v3 (3.0.1), whose scalars
follow YAML 1.2's core schema with a few yaml.v3 rules of its own, and then hands each config value to the
program through Pulumi's config code (`sdk/go/common/resource/config`, value.go and object.go, read at
042b255): a string as written, a bool or number as its JSON text, a list or map as JSON. PyYAML follows
YAML 1.1, so the two disagree on `yes`, `on`, `1:30`, dates and more, and the offline render would preview a
different stack from the one `pulumi up` creates. This module keeps PyYAML's parser (the syntax is the same
for every stack file we know of) and replaces its resolver and constructor with yaml.v3's rules:

- `yes`/`no`/`on`/`off`/`y`/`n` in any case are strings; only `true`/`True`/`TRUE` (and false) are booleans.
- `1:30` is the string `1:30` (yaml.v3 has no base-60 numbers); `017` is 15, `0o17`, `0x1F`, `0b101` are
  integers; `_` between digits is dropped; an integer past 64 bits becomes a float (rounded) in the engine.
- `2024-02-30` is a string (not a valid date); `2027-03-01` is a timestamp, which the engine passes on as
  `2027-03-01 00:00:00 +0000 UTC`: refused here, with the quoted form to write instead.
- `.inf`, `.nan` make the engine stop (JSON cannot carry them): refused here by key.
- explicit tags: `!!str`, `!!int`, `!!float`, `!!bool`, `!!null` as yaml.v3 applies them (`!!int "two"` is
  refused as the engine refuses it); any other tag is refused.
- a number comes to the program through JSON: `1.0` and `1e3` arrive as the integers 1 and 1000.
- a top-level config value that is not a list or map arrives as text (`gpuplane:x: 3` is the string `3`,
  an empty value the empty string), like `pulumi config get`.

The oracle: `tests/infra/yaml_engine/oracle.go` (yaml.v3 from Debian's golang-gopkg-yaml.v3-dev) writes the
table `tests/infra/yaml_engine/table.json` that `tests/infra/test_stackyaml.py` compares this module with.
Every problem is one line naming the file, line and column and the key path; nothing here raises anything
but `StackFileError`.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuplane.infra.untrusted import shown

# Bounds on what a stack file may make us read: no real stack file comes near them, a hostile one
# (megabytes, or a few lines of nested YAML aliases that expand to billions of nodes) stops here.
MAX_FILE_BYTES = 1 << 20
MAX_YAML_NODES = 100_000

_CORE = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null"))
TIMESTAMP, BINARY, MERGE = f"{_CORE}timestamp", f"{_CORE}binary", f"{_CORE}merge"
MAP, SEQ = f"{_CORE}map", f"{_CORE}seq"
# Marker tags our resolver gives untagged scalars, so the constructor knows what the user wrote.
_PLAIN = "gpuplane:plain"
_QUOTED = "gpuplane:quoted"

# yaml.v3 resolve.go: the first character decides what a plain scalar may be.
_HINT = {**dict.fromkeys("+-", "S"), **dict.fromkeys("0123456789", "D"), **dict.fromkeys("yYnNtTfFoO~", "M"), ".": "."}
_WORDS: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("true", "True", "TRUE"), (BOOL, True)),
    **dict.fromkeys(("false", "False", "FALSE"), (BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
}
_YAML_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# Go's strconv.ParseFloat on what starts with '.': digits (underscores between them) and an exponent.
_DOT_FLOAT = re.compile(r"^\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?$")
# yaml.v3 decode.go allowedTimestampFormats, as Go's time.Parse reads them (1 or 2 digit fields).
_TIMESTAMP = re.compile(
    r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?P<sep>[Tt ])(?P<H>[0-9]{1,2}):(?P<M>[0-9]{1,2}):(?P<S>[0-9]{1,2})(?:[.,][0-9]+)?"
    r"(?P<tz>Z|[+-][0-9]{2}:[0-9]{2})?)?$"
)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64_MAX = (1 << 64) - 1
_ALLOWED_TAGS = "!!str, !!int, !!float, !!bool, !!null, or none"


class StackFileError(Exception):
    """The file cannot be read as the engine reads it: every problem, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class _Resolver(yaml.resolver.BaseResolver):
    """Resolves nothing itself: plain and quoted scalars keep a marker for the constructor below."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _QUOTED
        return SEQ if kind is yaml.SequenceNode else MAP


class _Composer(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer, _Resolver):
    """PyYAML's reader, scanner, parser and composer: nodes with marks, no Python values yet."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Resolver.__init__(self)


def _where(path: Path, node: yaml.Node) -> str:
    return f"{path}: line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


def _key_path(keys: list[str | int]) -> str:
    """`config.gpuplane:cluster.x[0]` -> `gpuplane:cluster.x[0]`: keys named as the config errors name them."""
    text = ""
    for part in keys[1:] if len(keys) > 1 and keys[0] == "config" else keys:
        name = _cut(part) if isinstance(part, str) else str(part)
        text += f"[{name}]" if isinstance(part, int) else (f".{name}" if text else name)
    return text or "(top level)"


def _go_int(text: str) -> int | None:
    """Go's strconv.ParseInt/ParseUint with base 0 (sign, 0x, 0o, 0b, leading-0 octal); None if not one."""
    sign, body = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    prefixes = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}
    base, digits = prefixes.get(body[:2], 0), body[2:]
    if base == 0:
        base, digits = (8, body[1:]) if body[:1] == "0" and len(body) > 1 else (10, body)
    allowed = "0123456789abcdefABCDEF"[: base + (6 if base == 16 else 0)]
    if not digits or any(c not in allowed for c in digits):
        return None
    if len(digits.lstrip("0")) > 64:
        return None
    value = sign * int(digits, base)
    if _INT64[0] <= value <= _INT64[1] or (sign == 1 and text[:1] != "+" and 0 <= value <= _UINT64_MAX):
        return value
    return None


def _go_float(text: str) -> float | None:
    """Go's strconv.ParseFloat on a decimal text; None where it fails (including out of range: ±Inf)."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _timestamp(text: str) -> bool:
    """Whether yaml.v3 reads this plain scalar as a timestamp (a real date and time, as Go's time.Parse)."""
    match = _TIMESTAMP.match(text)
    if match is None:
        return False
    try:
        datetime.date(int(match["y"]), int(match["m"]), int(match["d"]))
    except ValueError:
        return False
    if match["sep"] is None:
        return True
    if match["sep"] == " " and match["tz"] is not None:
        return False  # "2006-1-2 15:4:5.999999999" has no zone
    if match["sep"] in "Tt" and match["tz"] is None:
        return False  # the RFC 3339 forms need one
    return int(match["H"]) < 24 and int(match["M"]) < 60 and int(match["S"]) < 60


def resolve(tag: str, text: str) -> tuple[str, Any]:
    """yaml.v3's `resolve(tag, in)`: (the tag it settles on, the value). `tag` is '' for an untagged plain scalar.

    Raises ValueError with yaml.v3's own complaint when an explicit tag does not fit the text.
    """
    resolved: tuple[str, Any] = (STR, text)
    hint = _HINT.get(text[0]) if text else "N"
    if hint is not None and tag not in (STR, BINARY):
        if text in _WORDS:
            resolved = _WORDS[text]
        elif hint == ".":
            if _DOT_FLOAT.match(text):
                value = _go_float(text)
                resolved = (FLOAT, value) if value is not None else resolved
        elif hint in "DS":
            resolved = _resolve_number(tag, text) or resolved
    found, value = resolved
    if tag in ("", found, STR, BINARY):
        return found, value
    if tag == FLOAT and found == INT:
        return FLOAT, float(value)
    raise ValueError(f"cannot decode {_short(found)} `{_cut(text)}` as a {_short(tag)}")


def _resolve_number(tag: str, text: str) -> tuple[str, Any] | None:
    if tag in ("", TIMESTAMP) and _timestamp(text):
        return TIMESTAMP, text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return INT, number
    if _YAML_STYLE_FLOAT.match(plain):
        value = _go_float(plain)
        if value is not None:
            return FLOAT, value
    return None


# Characters of a value quoted in a problem: enough to find it in the file, never the whole of a huge one.
QUOTED_LIMIT = 60


def _cut(text: str) -> str:
    """`text` for a message: control characters visible, cut to `QUOTED_LIMIT` saying how much more there is."""
    return shown(text, QUOTED_LIMIT, one_line=True)


def _short(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


@dataclass
class _Reader:
    """Builds Python values from composed nodes with the engine's rules, collecting problems."""

    path: Path
    problems: list[str]

    def value(self, node: yaml.Node, keys: list[str | int]) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, keys)
        if isinstance(node, yaml.SequenceNode):
            if node.tag not in (SEQ,):
                self.refuse_tag(node, keys)
            return [self.value(child, [*keys, i]) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            if node.tag not in (MAP,):
                self.refuse_tag(node, keys)
            return self.mapping(node, keys)
        return None

    def refuse_tag(self, node: yaml.Node, keys: list[str | int]) -> None:
        self.problems.append(
            f"{_where(self.path, node)}: {_key_path(keys)}: tag {_short(node.tag)} is not one a stack file may use; "
            f"allowed: {_ALLOWED_TAGS}"
        )

    def scalar(self, node: yaml.ScalarNode, keys: list[str | int]) -> Any:
        text = node.value
        where = f"{_where(self.path, node)}: {_key_path(keys)}"
        if node.tag == _QUOTED or (node.tag == _PLAIN and node.style):
            return text  # quoted or block: a string, also under the non-specific tag `!` (yaml.v3 indicatedString)
        tag = "" if node.tag == _PLAIN else node.tag
        if tag not in ("", STR, INT, FLOAT, BOOL, NULL):
            self.refuse_tag(node, keys)
            return None
        try:
            found, value = resolve(tag, text)
        except ValueError as exc:
            self.problems.append(f"{where}: {exc}, which the engine refuses; remove the tag or fix the value")
            return None
        digits = len(text.lstrip("+-").replace("_", ""))
        if found == STR and not tag and re.fullmatch(r"[-+]?[0-9][0-9_]*", text) and digits > 20:
            self.problems.append(
                f"{where}: {_cut(text)} is an integer of {digits} digits, past what the engine reads as a number "
                f"(a 64-bit float ends near 1.8e308): it would pass it on as text; allowed: an integer from "
                f"{_INT64[0]} to {_UINT64_MAX} (quote it for text)"
            )
            return None
        if found == TIMESTAMP:
            self.problems.append(
                f"{where}: {text} is a date for the engine, which would pass it on as "
                f"'{_go_time_text(text)}'; quote it: '{text}'"
            )
            return None
        if found == FLOAT and not math.isfinite(value):
            self.problems.append(
                f"{where}: {_cut(text)} is not a finite number, which the engine cannot pass on (it stops); "
                "allowed: a finite number (quote it for text)"
            )
            return None
        if found == FLOAT and re.fullmatch(r"[-+]?[0-9_]+", text) and json_number(value) != int(text.replace("_", "")):
            self.problems.append(
                f"{where}: {_cut(text)} is an integer past 64 bits, which the engine rounds to {json_number(value)}; "
                f"allowed: an integer from {_INT64[0]} to {_UINT64_MAX} (quote it for text)"
            )
            return None
        if found == FLOAT:
            return json_number(value)
        return value

    def mapping(self, node: yaml.MappingNode, keys: list[str | int]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in self.pairs(node, keys):
            key = self.key(key_node, keys)
            if key is None:
                continue
            if key in seen:
                self.problems.append(
                    f"{_where(self.path, key_node)}: {_key_path([*keys, key])}: key {key!r} appears twice in one "
                    f"mapping (first at line {seen[key]}); allowed: each key once (YAML keeps only the last)"
                )
            seen[key] = key_node.start_mark.line + 1
            result[key] = self.value(value_node, [*keys, key])
        return result

    def pairs(self, node: yaml.MappingNode, keys: list[str | int]) -> Iterator[tuple[yaml.Node, yaml.Node]]:
        """The mapping's own pairs, after the pairs its merge keys (`<<: *base`) bring, own keys winning."""
        own = [(k, v) for k, v in node.value if not (k.tag == _PLAIN and k.value == "<<")]
        own_keys = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if not (key_node.tag == _PLAIN and key_node.value == "<<"):
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if not isinstance(source, yaml.MappingNode):
                    self.problems.append(
                        f"{_where(self.path, source)}: {_key_path(keys)}: a merge key (<<) takes a mapping or a list "
                        "of mappings"
                    )
                    continue
                for k, v in self.pairs(source, keys):
                    if isinstance(k, yaml.ScalarNode) and k.value in own_keys:
                        continue
                    own_keys.add(k.value) if isinstance(k, yaml.ScalarNode) else None
                    merged.append((k, v))
        yield from merged
        yield from own

    def key(self, node: yaml.Node, keys: list[str | int]) -> str | None:
        """A mapping key as the engine's config code names it (`fmt.Sprintf("%v")`): text, an integer, a bool."""
        if isinstance(node, yaml.ScalarNode):
            value = self.scalar(node, keys)
            if isinstance(value, str):
                return value
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, int):
                return str(value)
        self.problems.append(
            f"{_where(self.path, node)}: {_key_path(keys)}: a key is {_key_kind(node)}, not text; "
            "allowed: a text key (quote it)"
        )
        return None


def _key_kind(node: yaml.Node) -> str:
    """What a key that is not text is, in the file's words (never the parser's objects)."""
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"'{_cut(str(node.value))}' ({_short(node.tag)})"


def json_number(value: float) -> float | int:
    """A float as the program gets it through the engine's JSON: Go prints integral floats below 1e21 as integers."""
    if value.is_integer() and abs(value) < 1e21:
        # Go writes the shortest digits that read back as the float and pads with zeros: 2**64 as a float is
        # 18446744073709552000 on the wire, not 18446744073709551616.
        return int(decimal.Decimal(repr(value)))
    return value


def engine_text(value: Any) -> Any:
    """A top-level config value as the program receives it: text for a scalar, the structure for a list or map.

    Pulumi's `object.MarshalString`: a string as written, a bool or number as its JSON text; yaml.v3 never
    calls the config value's reader for a null, so an empty value is the empty string.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float_text(value)
    return value


def go_float_text(value: float) -> str:
    """Go's encoding/json text of a finite float64 ('f' form from 1e-6 to 1e21, else 'e' form, 'e-7' not 'e-07')."""
    if value.is_integer() and abs(value) < 1e21:
        return str(json_number(value))
    if 1e-6 <= abs(value) < 1e21:
        return format(decimal.Decimal(repr(value)), "f")
    return re.sub(r"e([-+])0*([0-9])", r"e\1\2", repr(value))


def _go_time_text(text: str) -> str:
    """What Go's time.Time.String() makes of a date-only or UTC timestamp (the engine's text for it)."""
    match = _TIMESTAMP.match(text)
    if match is None:  # pragma: no cover - only called on timestamps
        return text
    date = f"{int(match['y']):04d}-{int(match['m']):02d}-{int(match['d']):02d}"
    clock = "00:00:00"
    if match["H"] is not None:
        clock = f"{int(match['H']):02d}:{int(match['M']):02d}:{int(match['S']):02d}"
        fraction = re.search(r"[.,]([0-9]+)", text[match.end("S") :])
        clock += f".{fraction[1].rstrip('0')}" if fraction and fraction[1].rstrip("0") else ""
    zone = match["tz"] or "Z"
    suffix = "+0000 UTC" if zone == "Z" else f"{zone.replace(':', '')} {zone.replace(':', '')}"
    return f"{date} {clock} {suffix}"


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many nodes `node` stands for once every alias is expanded (memoised: aliases share nodes)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a recursive alias counts once instead of looping
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = min(size, MAX_YAML_NODES * 10)
    return memo[id(node)]


def _control_character(text: str) -> str | None:
    """The first character YAML does not allow in a file (NUL, ESC from a coloured terminal...), with where."""
    for index, char in enumerate(text):
        code = ord(char)
        if (
            (code < 0x20 and char not in "\t\n\r")
            or 0x7F <= code <= 0x84
            or 0x86 <= code <= 0x9F
            or code in (0xFFFE, 0xFFFF)
        ):
            line = text.count("\n", 0, index) + 1
            column = index - (text.rfind("\n", 0, index) + 1) + 1
            return f"line {line}, column {column}: character {char!r} (U+{code:04X}) is not allowed in YAML; remove it"
    return None


def read(path: Path) -> Any:
    """The document in `path` as the engine reads it (None for an empty file); StackFileError listing problems."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise StackFileError([f"{path}: is {size} bytes; allowed: at most {MAX_FILE_BYTES} bytes"])
        with path.open("rb") as file:  # bounded too: what has no size (a pipe, a device) may never end
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise StackFileError([f"{path}: cannot be read ({exc.strerror or exc})"]) from None
    if len(data) > MAX_FILE_BYTES:
        raise StackFileError([f"{path}: is more than {MAX_FILE_BYTES} bytes; allowed: at most {MAX_FILE_BYTES} bytes"])
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise StackFileError([f"{path}: is UTF-16; allowed: UTF-8 (save the file as UTF-8)"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StackFileError(
            [f"{path}: byte {exc.start} ({data[exc.start]:#04x}) is not UTF-8; allowed: UTF-8 text"]
        ) from None
    bad = _control_character(text)
    if bad:
        raise StackFileError([f"{path}: {bad}"])
    return read_text(text, path)


def read_text(text: str, path: Path) -> Any:
    """`read` on text already decoded (the tests use it for the scalar table)."""
    try:
        composer = _Composer(text)
        try:
            node = composer.get_single_node()
        finally:
            composer.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = " ".join(str(exc.problem or exc.context or "").split())
        raise StackFileError([f"{path}: {where}not valid YAML: {what}"]) from None
    except yaml.YAMLError as exc:
        raise StackFileError([f"{path}: not valid YAML: {' '.join(str(exc).split())}"]) from None
    except RecursionError:
        raise StackFileError([f"{path}: nested too deeply; allowed: a plain stack config"]) from None
    if node is None:
        return None
    if _expanded_size(node, {}) > MAX_YAML_NODES:
        raise StackFileError(
            [f"{path}: expands to more than {MAX_YAML_NODES} YAML nodes (aliases); allowed: at most {MAX_YAML_NODES}"]
        )
    reader = _Reader(path, [])
    try:
        document = reader.value(node, [])
    except RecursionError:
        raise StackFileError([f"{path}: nested too deeply; allowed: a plain stack config"]) from None
    if reader.problems:
        raise StackFileError(reader.problems)
    return document
