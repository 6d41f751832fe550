"""The AWS side of a render as a Terraform plan (`tfplan.json`), for the scanners security teams run.

Why: checkov, trivy and conftest judge infrastructure from Terraform plans, not Pulumi plans. pulumi-aws
is generated from the Terraform AWS provider, so a Pulumi AWS resource and its inputs map one to one
onto a Terraform resource and its attributes. The names are the provider's facts, kept in
`tfplan_map.json` (from pulumi-aws's `bridge-metadata.json`, with its source), not guesses.

What a scanner's graph needs is the references: Terraform writes a value that is only known after apply
(a VPC id in a subnet) as null in `planned_values` and names what it refers to in
`configuration.root_module.resources[].expressions[attr].references` (checkov's `plan_parser` reads
exactly that, matching resources by type and name). The mock run's placeholder ids and ARNs are
therefore replaced here by such references. A string that merely contains a placeholder (a policy
document naming a file system's ARN) keeps its value, so the policy can still be checked, and carries
the reference too.

An AWS type without a mapping raises `UnmappedTypeError` naming every such type: a resource silently
left out of a security scan is worse than a failed render.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import yaml

from gpuplane.infra import mockrun

FORMAT_VERSION = "1.2"
# Readers (checkov's `plan_utils`) recognise a plan by a non-empty `terraform_version`. No Terraform
# ran: the build tag says the file is ours, the version that its format is Terraform 1.9's (format 1.2).
TERRAFORM_VERSION = "1.9.0+gpuplane"
PROVIDER = "registry.terraform.io/hashicorp/aws"
# Placeholders shorter than this are too likely to match an unrelated value ("1", "true").
_MIN_MATCH = 6


class UnmappedTypeError(ValueError):
    """AWS resource types that `tfplan_map.json` does not map to a Terraform type."""

    def __init__(self, types: Iterable[str]) -> None:
        self.types = sorted(set(types))
        super().__init__(
            "no Terraform type known for "
            + ", ".join(self.types)
            + ": add each token's Terraform name from pulumi-aws's bridge-metadata.json to infra/tfplan_map.json"
        )


@cache
def mapping() -> dict[str, Any]:
    """The token -> Terraform type table and property renames (see `tfplan_map.json` for its source)."""
    text = resources.files("gpuplane.infra").joinpath("tfplan_map.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def snake(name: str) -> str:
    """Turn camelCase into snake_case as the bridge does it (`serviceIpv4Cidr` -> `service_ipv4_cidr`)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def tf_attribute(token: str, prop: str) -> str:
    """The Terraform attribute name of Pulumi property `prop` of resource `token`."""
    renamed: dict[str, str] = mapping()["renamedProperties"].get(token, {})
    return renamed.get(prop) or snake(prop)


def tf_name(pulumi_name: str) -> str:
    """A Terraform resource name from a Pulumi logical name (letters, digits, underscores)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", pulumi_name)
    return name if name[:1].isalpha() else f"r_{name}"


def _aws_resources(resources_: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in resources_ if r.get("custom") and str(r["type"]).startswith("aws:")]


def _flatten(value: Any, path: tuple[str | int, ...] = ()) -> Iterable[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from _flatten(value[key], (*path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _flatten(item, (*path, i))
    else:
        yield path, value


class _Address:
    """Terraform addresses of attributes of one resource, for `references`."""

    def __init__(self, token: str, address: str) -> None:
        self.token = token
        self.address = address

    def refs(self, path: tuple[str | int, ...]) -> list[str]:
        """Terraform's style: the most specific traversal first, then each shorter prefix."""
        parts: list[str] = []
        for step in path:
            if isinstance(step, int):
                parts[-1] = f"{parts[-1]}[{step}]"
            else:
                parts.append(tf_attribute(self.token, step))
        out = []
        for i in range(len(parts), 0, -1):
            out.append(".".join([self.address, *parts[:i]]))
            if "[" in parts[i - 1]:
                out.append(".".join([self.address, *parts[: i - 1], parts[i - 1].split("[")[0]]))
        out.append(self.address)
        return list(dict.fromkeys(out))


def _unknowns(resource: Mapping[str, Any], state: Mapping[str, Any] | None) -> dict[str, tuple[str | int, ...]]:
    """Values of `resource` that only the cloud knows (its id and computed outputs) -> their path.

    With no recorded state (a plan.json read back), the id and ARN are all that is known to be computed.
    """
    found: dict[str, tuple[str | int, ...]] = {}
    inputs = resource.get("inputs", {})
    if state is None:
        return found
    input_values = dict(_flatten(inputs))
    for path, value in _flatten(state.get("outputs", {})):
        if isinstance(value, str) and len(value) >= _MIN_MATCH and input_values.get(path) != value:
            found.setdefault(value, path)
    rid = state.get("id")
    if isinstance(rid, str) and len(rid) >= _MIN_MATCH and rid not in input_values.values():
        found[rid] = ("id",)
    return found


def _known_names(resource: Mapping[str, Any]) -> dict[str, tuple[str | int, ...]]:
    """Input values other resources commonly refer to by reference although they are known (a cluster name)."""
    inputs = resource.get("inputs", {})
    return {
        inputs[key]: (key,) for key in ("name",) if isinstance(inputs.get(key), str) and len(inputs[key]) >= _MIN_MATCH
    }


class _Converter:
    def __init__(self, plan: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]] | None) -> None:
        table: dict[str, str] = mapping()["resources"]
        aws = _aws_resources(plan["resources"])
        missing = [r["type"] for r in aws if r["type"] not in table]
        if missing:
            raise UnmappedTypeError(missing)
        self.plan = plan
        self.resources = sorted(aws, key=lambda r: str(r["urn"]))
        self.address: dict[str, _Address] = {}
        used: set[str] = set()
        for r in self.resources:
            tf_type = table[r["type"]]
            name = tf_name(str(r["name"]))
            candidate, n = name, 1
            while f"{tf_type}.{candidate}" in used:
                n += 1
                candidate = f"{name}_{n}"
            used.add(f"{tf_type}.{candidate}")
            self.address[r["urn"]] = _Address(r["type"], f"{tf_type}.{candidate}")
        self.unknown = {r["urn"]: _unknowns(r, (states or {}).get(r["urn"])) for r in self.resources}
        self.known = {r["urn"]: _known_names(r) for r in self.resources}

    def _lookups(self, resource: Mapping[str, Any]) -> list[tuple[str, dict[str, tuple[str | int, ...]], bool]]:
        """(dependency urn, value -> path, is_unknown) for every AWS dependency, in a stable order."""
        out = []
        for dep in sorted(set(resource.get("dependencies", []))):
            if dep in self.address:
                out.append((dep, self.unknown[dep], True))
                out.append((dep, self.known[dep], False))
        return out

    def _value(
        self, token: str, value: Any, lookups: list[tuple[str, dict[str, tuple[str | int, ...]], bool]]
    ) -> tuple[Any, Any, Any]:
        """(planned value, expression, after_unknown) of one input value."""
        if isinstance(value, Mapping):
            return self._block(token, value, lookups)
        if isinstance(value, list):
            if value and all(isinstance(v, Mapping) for v in value):
                parts = [self._block(token, v, lookups) for v in value]
                return [p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts]
            values: list[Any] = []
            refs: list[str] = []
            unknown: list[Any] = []
            for item in value:
                v, e, u = self._value(token, item, lookups)
                values.append(v)
                refs.extend(e.get("references", []) if isinstance(e, dict) else [])
                unknown.append(u)
            if refs:
                expr: dict[str, Any] = {"references": list(dict.fromkeys(refs))}
            else:
                expr = {"constant_value": values}
            return values, expr, (any(unknown) if any(unknown) else False)
        if value == mockrun.SECRET_PLACEHOLDER:
            return None, {}, False
        if isinstance(value, str):
            for dep, table, is_unknown in lookups:
                if value in table:
                    refs = self.address[dep].refs(table[value])
                    return (None if is_unknown else value), {"references": refs}, is_unknown
            refs = [
                ref
                for dep, table, is_unknown in lookups
                if is_unknown
                for placeholder, path in table.items()
                if placeholder in value
                for ref in self.address[dep].refs(path)
            ]
            if refs:
                return value, {"references": list(dict.fromkeys(refs))}, False
        return value, {"constant_value": value}, False

    def _block(
        self, token: str, inputs: Mapping[str, Any], lookups: list[tuple[str, dict[str, tuple[str | int, ...]], bool]]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        values: dict[str, Any] = {}
        exprs: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        maps = set(mapping()["maps"])
        for prop in sorted(inputs):
            attr = tf_attribute(token, prop)
            raw = inputs[prop]
            if prop in maps and isinstance(raw, Mapping):
                values[attr] = dict(sorted(raw.items()))
                exprs[attr] = {"constant_value": values[attr]}
                continue
            v, e, u = self._value(token, raw, lookups)
            if isinstance(raw, Mapping):  # a nested block: Terraform writes it as a list of one
                v, e, u = [v], [e], [u]
            if v is not None:
                values[attr] = v
            if e:
                exprs[attr] = e
            if u:
                unknown[attr] = u
        return values, exprs, unknown

    def document(self) -> dict[str, Any]:
        planned, changes, config = [], [], []
        for r in self.resources:
            addr = self.address[r["urn"]].address
            tf_type, name = addr.split(".", 1)
            values, exprs, unknown = self._block(r["type"], r.get("inputs", {}), self._lookups(r))
            head = {"address": addr, "mode": "managed", "type": tf_type, "name": name, "provider_name": PROVIDER}
            planned.append({**head, "schema_version": 0, "values": values, "sensitive_values": {}})
            changes.append(
                {
                    **head,
                    "change": {
                        "actions": ["create"],
                        "before": None,
                        "after": values,
                        "after_unknown": unknown,
                        "before_sensitive": False,
                        "after_sensitive": {},
                    },
                }
            )
            config.append(
                {
                    "address": addr,
                    "mode": "managed",
                    "type": tf_type,
                    "name": name,
                    "provider_config_key": "aws",
                    "expressions": exprs,
                    "schema_version": 0,
                }
            )
        region = self.plan.get("config", {}).get("aws:region")
        return {
            "format_version": FORMAT_VERSION,
            "terraform_version": TERRAFORM_VERSION,
            "planned_values": {"root_module": {"resources": planned}},
            "resource_changes": changes,
            "configuration": {
                "provider_config": {
                    "aws": {
                        "name": "aws",
                        "full_name": PROVIDER,
                        "expressions": {"region": {"constant_value": region}},
                    }
                },
                "root_module": {"resources": config},
            },
        }


def convert(plan: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Terraform plan JSON of `plan`'s AWS resources.

    `plan` is a `plan.json` document; `states` maps a URN to `{"id", "outputs"}` as the mock run recorded
    them, which tells the converter which values only the cloud would know.
    """
    return _Converter(plan, states).document()


def from_recording(plan: Mapping[str, Any], recording: mockrun.Recording) -> dict[str, Any]:
    """`convert` with the states of a mock run."""
    states = {r.urn: {"id": r.id, "outputs": r.outputs} for r in recording.resources}
    return convert(plan, states)


def dumps(document: Mapping[str, Any]) -> str:
    """Deterministic text of a plan document (sorted keys, trailing newline)."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


SKIP_KINDS = ("design", "open-gap")


def aws_skips(text: str) -> list[dict[str, Any]]:
    """The entries of the AWS-side skip file (`.checkov/aws-skips.yaml`), each checked for its fields.

    Every skip names its check, the stacks it applies to, a kind (`design` or `open-gap`) and a reason:
    a skip without a reason is a silenced failure.
    """
    data = yaml.safe_load(text) or {}
    entries = data.get("skips")
    if not isinstance(entries, list):
        raise ValueError("aws-skips: `skips` must be a list of {check, stacks, kind, reason}")
    for i, entry in enumerate(entries):
        where = f"aws-skips: skips[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"check", "stacks", "kind", "reason"}:
            raise ValueError(f"{where} must have exactly the keys check, stacks, kind, reason; got {entry!r}")
        if not re.fullmatch(r"CKV2?_AWS_\d+", str(entry["check"])):
            raise ValueError(f"{where}.check is {entry['check']!r}; allowed: an AWS checkov id such as CKV_AWS_39")
        if entry["kind"] not in SKIP_KINDS:
            raise ValueError(f"{where}.kind is {entry['kind']!r}; allowed: {', '.join(SKIP_KINDS)}")
        if not isinstance(entry["reason"], str) or len(entry["reason"].split()) < 5:
            raise ValueError(f"{where}.reason is {entry['reason']!r}; allowed: a sentence saying why")
        if not isinstance(entry["stacks"], list) or not entry["stacks"]:
            raise ValueError(f"{where}.stacks is {entry['stacks']!r}; allowed: a non-empty list of stack names")
    return entries


def skip_checks(text: str, stack: str) -> list[str]:
    """The check ids skipped for `stack`, sorted (what `make scan` passes to `--skip-check`)."""
    return sorted({e["check"] for e in aws_skips(text) if stack in e["stacks"]})
