"""Regenerate `components/facts/data/prices.json`: the dated on-demand EC2 price table every render uses.

Why a shipped table: `gpuplane render` runs offline and must still say what a stack costs (a GPU group of
p5.48xlarge costs about $55 an hour a node). The table holds Linux, shared-tenancy, on-demand USD per hour, as
AWS's Price List API publishes it, for the regions its source covers; it records the source and the date
the prices were read, which every render repeats. Two ways to fill it:

- `--from karpenter --karpenter DIR` (offline): the tables Karpenter generates from the Price List API and
  commits (kubernetes-sigs/karpenter-provider-aws, `pkg/providers/pricing/zz_generated.pricing_aws.go` for
  us-east-1 and `..._aws_us_gov.go` for the GovCloud regions; the aws-cn file is in CNY and is left out).
  DIR is a checkout of that repository.
- `--from live --regions us-west-2,...` (with AWS credentials): the Price List API itself (`pricing`
  client, us-east-1 endpoint), for any regions.

Usage: `python scripts/refresh_prices.py --from karpenter --karpenter ~/src/karpenter-provider-aws`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "components" / "facts" / "data" / "prices.json"
KARPENTER_FILES = (
    "pkg/providers/pricing/zz_generated.pricing_aws.go",
    "pkg/providers/pricing/zz_generated.pricing_aws_us_gov.go",
)
_GENERATED_RE = re.compile(r"// generated at (\d{4}-\d{2}-\d{2})T[\d:]+Z")
_REGION_RE = re.compile(r'^\s*"([a-z]{2}(?:-[a-z]+)+-\d)": \{\s*$')
_PRICE_RE = re.compile(r'"([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)": ([0-9.]+)')


def parse_karpenter(text: str) -> tuple[str, dict[str, dict[str, float]]]:
    """The date and the per-region prices of one Karpenter `zz_generated.pricing_*.go` file."""
    generated = _GENERATED_RE.search(text)
    if generated is None:
        raise ValueError("no '// generated at <date>' line: not a Karpenter generated pricing file")
    regions: dict[str, dict[str, float]] = {}
    current: dict[str, float] | None = None
    for line in text.splitlines():
        region = _REGION_RE.match(line)
        if region:
            current = regions.setdefault(region.group(1), {})
            continue
        if current is not None:
            for name, price in _PRICE_RE.findall(line):
                current[name] = float(price)
    if not regions:
        raise ValueError("no region block found in the pricing file")
    return generated.group(1), regions


def build(regions: Mapping[str, Mapping[str, float]], source: str, generated: str) -> dict[str, Any]:
    """The table: source, date, currency and the prices per region (sorted, zero prices dropped)."""
    return {
        "source": source,
        "generated": generated,
        "currency": "USD",
        "regions": {r: {t: p for t, p in sorted(regions[r].items()) if p > 0} for r in sorted(regions)},
    }


def dumps(document: Mapping[str, Any]) -> str:
    """JSON with one price per line, so a refresh reviews as a diff."""
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in document.items() if k != "regions"]
    lines.append('  "regions": {')
    regions = list(document["regions"].items())
    for i, (region, prices) in enumerate(regions):
        lines.append(f"    {json.dumps(region)}: {{")
        items = list(prices.items())
        lines += [f"      {json.dumps(t)}: {p}{',' if j < len(items) - 1 else ''}" for j, (t, p) in enumerate(items)]
        lines.append("    }" + ("," if i < len(regions) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def from_karpenter(checkout: Path) -> tuple[dict[str, dict[str, float]], str, str]:
    """Prices, source line and date from a karpenter-provider-aws checkout."""
    regions: dict[str, dict[str, float]] = {}
    dates = []
    for name in KARPENTER_FILES:
        date, found = parse_karpenter((checkout / name).read_text())
        dates.append(date)
        regions.update(found)
    commit = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%H", "--", KARPENTER_FILES[0]],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    source = (
        "Price List API via kubernetes-sigs/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go"
        f" and _aws_us_gov.go{f' (commit {commit[:12]})' if commit else ''}: Linux, shared tenancy, on-demand"
    )
    return regions, source, min(dates)


def from_live(regions: list[str], profile: str | None) -> tuple[dict[str, dict[str, float]], str, str]:
    """Prices from the Price List API (needs credentials): Linux, shared tenancy, on-demand, per region."""
    pricing = boto3.Session(profile_name=profile).client("pricing", region_name="us-east-1")
    out: dict[str, dict[str, float]] = {}
    for region in regions:
        filters = [
            {"Type": "TERM_MATCH", "Field": field, "Value": value}
            for field, value in (
                ("regionCode", region),
                ("operatingSystem", "Linux"),
                ("tenancy", "Shared"),
                ("preInstalledSw", "NA"),
                ("capacitystatus", "Used"),
                ("licenseModel", "No License required"),
            )
        ]
        prices: dict[str, float] = {}
        for page in pricing.get_paginator("get_products").paginate(ServiceCode="AmazonEC2", Filters=filters):
            for item in page["PriceList"]:
                product = json.loads(item)
                name = product["product"]["attributes"].get("instanceType")
                for term in product.get("terms", {}).get("OnDemand", {}).values():
                    for dimension in term["priceDimensions"].values():
                        usd = float(dimension["pricePerUnit"].get("USD", 0))
                        if name and usd > 0:
                            prices[name] = usd
        out[region] = prices
    return out, "AWS Price List API, live (Linux, shared tenancy, on-demand)", dt.date.today().isoformat()


def main(argv: list[str] | None = None) -> int:
    """Write the table; prints what it wrote."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--from", dest="source", choices=("karpenter", "live"), default="karpenter")
    parser.add_argument("--karpenter", type=Path, help="karpenter only: a karpenter-provider-aws checkout")
    parser.add_argument("--regions", default="us-east-1,us-west-2", help="live only: comma-separated")
    parser.add_argument("--profile", default=None, help="live only: AWS profile")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.source == "karpenter":
        if args.karpenter is None:
            parser.error("--from karpenter needs --karpenter DIR (a karpenter-provider-aws checkout)")
        regions, source, generated = from_karpenter(args.karpenter)
    else:
        regions, source, generated = from_live([r for r in args.regions.split(",") if r], args.profile)
    document = build(regions, source, generated)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumps(document))
    counts = ", ".join(f"{r} {len(p)}" for r, p in document["regions"].items())
    print(f"wrote {args.out}: prices of {generated} ({counts}); {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
