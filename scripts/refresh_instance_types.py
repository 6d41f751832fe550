"""Regenerate `components/facts/data/instance_types.json`: the EC2 instance-type facts gpuplane ships.

Why a generated file and not a hand-written table: EC2 has about 1,400 instance types and adds families every
few months; a table written by hand refused common types (c6a, r5, m5a) and drifted. The facts come from
EC2's own `DescribeInstanceTypes` and `DescribeInstanceTypeOfferings` answers, in one of two ways:

- `--from moto` (default, offline): the copy of those answers that moto ships in its wheel
  (`moto/ec2/resources/instance_types.json.gz` and `instance_type_offerings/region/*.json.gz`; moto is
  already a test dependency, pinned in pyproject.toml). Refreshing = bump moto's pin, run this, commit.
- `--from live` (with AWS credentials): the same two calls against the live API, for `--regions`.

The output keeps only what gpuplane reads (README "Instance types"), one type per line so that a
refresh reads as a diff: vCPUs, memory, architecture, CPU maker, GPUs, other accelerators (named, so that
gpuplane can refuse them by name), EFA support and interfaces, network cards, usage classes and the regions
that offer the type. It records where the data came from and when, which `catalog.lookup` repeats in its
error for a type the file lacks.

Usage: `python scripts/refresh_instance_types.py [--from moto|live] [--regions us-east-1,...] [--out FILE]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import sys
from collections.abc import Iterable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

import boto3
import moto  # a dev dependency (pyproject.toml [dev]): its wheel carries the data

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "components" / "facts" / "data" / "instance_types.json"
_ACCELERATOR_KEYS = (
    ("NeuronInfo", "NeuronDevices"),
    ("InferenceAcceleratorInfo", "Accelerators"),
    ("FpgaInfo", "Fpgas"),
    ("MediaAcceleratorInfo", "Accelerators"),
)


def compact_type(api: Mapping[str, Any], regions: Iterable[str], covered: Iterable[str]) -> dict[str, Any]:
    """One `DescribeInstanceTypes` entry reduced to the facts gpuplane uses (keys as in the shipped file).

    `regions`: where the type is offered; `covered`: every region the data covers. The entry holds
    `regions` (offered in) or `exceptRegions` (offered in every covered region but these), whichever is shorter.
    """
    network = api.get("NetworkInfo", {})
    entry: dict[str, Any] = {
        "architectures": sorted(api["ProcessorInfo"]["SupportedArchitectures"]),
        "cpu": api["ProcessorInfo"].get("Manufacturer", ""),
        "vcpus": api["VCpuInfo"]["DefaultVCpus"],
        "memoryMiB": api["MemoryInfo"]["SizeInMiB"],
    }
    gpus = (api.get("GpuInfo") or {}).get("Gpus", [])
    if gpus:
        # Every EC2 type carries one GPU model (DescribeInstanceTypes lists one entry); more would be refused.
        entry["gpus"] = [
            {
                "count": g["Count"],
                "maker": g["Manufacturer"],
                "name": g["Name"],
                "memoryMiB": g["MemoryInfo"]["SizeInMiB"],
            }
            for g in gpus
        ]
    accelerators = [
        # "AWS Inferentia2", "Xilinx Virtex UltraScale+ (VU47P)"; a name that already starts with its maker
        # ("Qualcomm AI100") is kept as it is.
        a["Name"] if a["Name"].startswith(maker := a.get("Manufacturer", "AWS")) else f"{maker} {a['Name']}"
        for info, key in _ACCELERATOR_KEYS
        for a in (api.get(info) or {}).get(key, [])
    ]
    if accelerators:
        entry["accelerators"] = sorted(set(accelerators))
    if network.get("EfaSupported"):
        entry["efaInterfaces"] = network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0)
    # One row per network card: [maximum interfaces, interface types it takes, baseline Gbps]; the index is
    # the position (NetworkCardIndex runs 0..n-1 in every answer seen).
    entry["networkCards"] = [
        [
            card.get("MaximumNetworkInterfaces", 0),
            ",".join(card.get("InterfaceTypes", ["interface"])),
            card.get("BaselineBandwidthInGbps", 0),
        ]
        for card in sorted(network.get("NetworkCards", []), key=lambda c: c.get("NetworkCardIndex", 0))
    ]
    entry["maxNetworkInterfaces"] = network.get("MaximumNetworkInterfaces", 0)
    entry["usageClasses"] = sorted(api.get("SupportedUsageClasses", []))
    entry["currentGeneration"] = bool(api.get("CurrentGeneration"))
    entry["bareMetal"] = bool(api.get("BareMetal"))
    offered = set(regions)
    # The shorter of the two lists keeps the file small: most types are offered in most regions.
    missing = set(covered) - offered
    if len(missing) < len(offered):
        entry["exceptRegions"] = sorted(missing)
    else:
        entry["regions"] = sorted(offered)
    return entry


def build(
    types: Mapping[str, Mapping[str, Any]], offerings: Mapping[str, Iterable[str]], source: str, generated: str
) -> dict[str, Any]:
    """The whole data file: its source and date, the regions covered, and one compact entry per type."""
    by_type: dict[str, set[str]] = {name: set() for name in types}
    for region, names in offerings.items():
        for name in names:
            if name in by_type:
                by_type[name].add(region)
    return {
        "source": source,
        "generated": generated,
        "regions": sorted(offerings),
        "types": {name: compact_type(types[name], by_type[name], offerings) for name in sorted(types)},
    }


def dumps(document: Mapping[str, Any]) -> str:
    """JSON with one instance type per line, so a refresh reviews as a line-per-type diff."""
    head = {k: v for k, v in document.items() if k != "types"}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('  "types": {')
    items = list(document["types"].items())
    lines += [
        f"    {json.dumps(name)}: {json.dumps(entry, sort_keys=True)}{',' if i < len(items) - 1 else ''}"
        for i, (name, entry) in enumerate(items)
    ]
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def from_moto() -> tuple[dict[str, Any], dict[str, list[str]], str]:
    """The DescribeInstanceTypes answer and per-region offerings moto bundles, and a source line naming moto."""
    root = Path(moto.__file__).parent / "ec2" / "resources"
    with gzip.open(root / "instance_types.json.gz") as f:
        types = json.loads(f.read())
    offerings: dict[str, list[str]] = {}
    for path in sorted((root / "instance_type_offerings" / "region").glob("*.json.gz")):
        with gzip.open(path) as f:
            offerings[path.name.removesuffix(".json.gz")] = [o["InstanceType"] for o in json.loads(f.read())]
    source = (
        f"moto {version('moto')} (PyPI): moto/ec2/resources/instance_types.json.gz and "
        "instance_type_offerings/region/*.json.gz, its copy of EC2 DescribeInstanceTypes and "
        "DescribeInstanceTypeOfferings"
    )
    return types, offerings, source


def from_live(regions: list[str], profile: str | None) -> tuple[dict[str, Any], dict[str, list[str]], str]:
    """The live EC2 API (needs credentials): DescribeInstanceTypes and DescribeInstanceTypeOfferings per region."""
    session = boto3.Session(profile_name=profile)
    types: dict[str, Any] = {}
    offerings: dict[str, list[str]] = {}
    for region in regions:
        ec2 = session.client("ec2", region_name=region)
        for page in ec2.get_paginator("describe_instance_types").paginate():
            for item in page["InstanceTypes"]:
                types.setdefault(item["InstanceType"], item)
        names = []
        for page in ec2.get_paginator("describe_instance_type_offerings").paginate(LocationType="region"):
            names += [o["InstanceType"] for o in page["InstanceTypeOfferings"]]
        offerings[region] = names
    calls = "DescribeInstanceTypes and DescribeInstanceTypeOfferings"
    return types, offerings, f"EC2 API, live: {calls} in {', '.join(regions)}"


def main(argv: list[str] | None = None) -> int:
    """Write the data file; prints what it wrote."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--from", dest="source", choices=("moto", "live"), default="moto")
    parser.add_argument("--regions", default="us-east-1,us-east-2,us-west-2", help="live only: comma-separated")
    parser.add_argument("--profile", default=None, help="live only: AWS profile")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", default=dt.date.today().isoformat(), help="the date recorded (default: today)")
    args = parser.parse_args(argv)
    if args.source == "moto":
        types, offerings, source = from_moto()
    else:
        types, offerings, source = from_live([r for r in args.regions.split(",") if r], args.profile)
    document = build(types, offerings, source, args.date)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumps(document))
    print(f"wrote {args.out}: {len(document['types'])} types, {len(document['regions'])} regions; {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
