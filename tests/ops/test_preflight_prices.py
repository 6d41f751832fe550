"""Live prices in preflight: the Price List API and the spot price history, with botocore's Stubber."""

from __future__ import annotations

import datetime as dt
import json

import boto3
from botocore.stub import ANY, Stubber

from gpuplane.infra import config
from gpuplane.infra.aws import preflight


def _product(usd: str) -> str:
    """One Price List API product, as GetProducts returns it (a JSON string per product)."""
    return json.dumps(
        {
            "product": {"attributes": {"instanceType": "g5.xlarge", "regionCode": "us-west-2"}},
            "terms": {
                "OnDemand": {"X.Y": {"priceDimensions": {"X.Y.Z": {"pricePerUnit": {"USD": usd}, "unit": "Hrs"}}}}
            },
        }
    )


def test_on_demand_price_reads_the_price_list_api():
    pricing = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {"PriceList": [_product("1.0060000000")], "FormatVersion": "aws_v1"},
            {"ServiceCode": "AmazonEC2", "Filters": ANY, "MaxResults": 10},
        )
        assert preflight.on_demand_price(pricing, "g5.xlarge", "us-west-2") == 1.006
        stub.add_response(
            "get_products", {"PriceList": []}, {"ServiceCode": "AmazonEC2", "Filters": ANY, "MaxResults": 10}
        )
        assert preflight.on_demand_price(pricing, "g5.xlarge", "us-west-2") is None


def test_spot_prices_keep_the_latest_per_zone():
    ec2 = boto3.client("ec2", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    now = dt.datetime(2026, 11, 26, 12, tzinfo=dt.UTC)
    history = [
        {"InstanceType": "g5.xlarge", "AvailabilityZone": "us-west-2a", "SpotPrice": "0.4100", "Timestamp": now},
        {
            "InstanceType": "g5.xlarge",
            "AvailabilityZone": "us-west-2a",
            "SpotPrice": "0.5000",
            "Timestamp": now - dt.timedelta(hours=1),
        },
        {"InstanceType": "g5.xlarge", "AvailabilityZone": "us-west-2b", "SpotPrice": "0.3900", "Timestamp": now},
    ]
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_spot_price_history",
            {"SpotPriceHistory": history},
            {"InstanceTypes": ["g5.xlarge"], "ProductDescriptions": ["Linux/UNIX"], "StartTime": ANY},
        )
        assert preflight.spot_prices(ec2, ["g5.xlarge"]) == {"g5.xlarge": {"us-west-2a": 0.41, "us-west-2b": 0.39}}


def test_price_checks_show_live_prices_beside_the_renders_table():
    dev = config.load("dev")  # gpu: g5.xlarge, g5.2xlarge spot; system: m6i.large on-demand; us-west-2
    live = {"g5.xlarge": 1.006, "g5.2xlarge": 1.212, "m6i.large": None}
    spot = {"g5.xlarge": {"us-west-2a": 0.41, "us-west-2b": 0.39}}
    checks = {c.name: c for c in preflight.price_checks(dev, live, spot)}
    gpu = checks["prices: gpu"]
    assert gpu.status == "pass"
    assert gpu.detail.startswith(
        "g5.xlarge on-demand $1.006/h (render's table us-east-1, 2026-07-20: 1.006); spot now $0.39-0.41/h in "
        "us-west-2a, us-west-2b; g5.2xlarge on-demand $1.212/h"
    )
    assert gpu.detail.endswith("; no spot price history")
    system = checks["prices: system"]
    assert system.status == "warn" and "m6i.large on-demand: no live price" in system.detail
    assert "pricing:GetProducts" in system.fix


def test_live_prices_warn_when_the_api_refuses():
    dev = config.load("dev")
    session = boto3.session.Session(region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="y")
    pricing = session.client("pricing", region_name="us-east-1")
    stub = Stubber(pricing)
    stub.add_client_error("get_products", "AccessDeniedException", "not allowed", 400)
    stub.activate()
    original = session.client
    session.client = lambda service, **kw: pricing if service == "pricing" else original(service, **kw)
    (check,) = preflight.live_prices(dev, session)
    assert (check.name, check.status) == ("prices", "warn")
    assert "pricing:GetProducts" in check.detail
