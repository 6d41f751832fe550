"""tests/readers.py: the libraries' re-read files are kept per process, and they still check what they checked."""

from __future__ import annotations

import boto3
import kubernetes_validate
import pytest
import typer
from typer.testing import CliRunner

from tests import readers


def test_every_reader_is_kept_once_collection_loaded_its_library():
    # This module imports all three, so after collection each has been replaced by its cached twin.
    kept = readers.installed()
    assert sorted(kept) == ["command", "loader", "schemas"]
    assert all(hasattr(function, "cache_info") for function in kept.values())


def test_a_kept_schema_still_refuses_what_the_schema_refuses():
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
    assert kubernetes_validate.validate(good, "1.34", strict=True) == "1.34"
    before = readers.installed()["schemas"].cache_info().hits
    bad = {**good, "data": {"k": 1}}
    with pytest.raises(kubernetes_validate.ValidationError, match="1 is not of type 'string'"):
        kubernetes_validate.validate(bad, "1.34", strict=True)
    assert readers.installed()["schemas"].cache_info().hits >= before + 2  # the kind's schema and the definitions


def test_sessions_share_the_models_and_each_keeps_its_own_settings():
    one = boto3.session.Session(region_name="eu-west-1")
    two = boto3.session.Session(region_name="us-east-2")
    assert one._session.get_component("data_loader") is two._session.get_component("data_loader")
    assert one.client("ec2").meta.region_name == "eu-west-1"
    assert two.client("ec2").meta.region_name == "us-east-2"


def test_one_app_is_one_command_tree_and_each_call_gets_its_own_arguments():
    app = typer.Typer()

    @app.command()
    def hello(name: str) -> None:
        print(f"hello {name}")

    runner = CliRunner()
    assert runner.invoke(app, ["a"]).output == "hello a\n"
    assert runner.invoke(app, ["b"]).output == "hello b\n"
    assert readers.installed()["command"](app) is readers.installed()["command"](app)
