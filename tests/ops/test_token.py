"""The EKS token: format and signature parameters, decoded; the ExecCredential and the kubeconfig."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra.aws import token
from gpuplane.infra.cli import app


def _decode(value: str) -> str:
    assert value.startswith("k8s-aws-v1.")
    body = value.removeprefix("k8s-aws-v1.")
    assert "=" not in body and "+" not in body and "/" not in body  # urlsafe, no padding
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()


@pytest.mark.parametrize("region", ["us-west-2", "eu-central-1"])
def test_token_is_a_presigned_regional_get_caller_identity(region, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")  # must not leak into the token
    url = urlsplit(_decode(token.token(boto3.session.Session(), "gpuplane-dev", region)))
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert (url.scheme, url.netloc, url.path) == ("https", f"sts.{region}.amazonaws.com", "/")
    assert query["Action"] == "GetCallerIdentity"
    assert query["Version"] == "2011-06-15"
    assert query["X-Amz-Expires"] == "60"
    assert query["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256"
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"].split(";")
    assert (
        query["X-Amz-Credential"].startswith("testing/") and f"/{region}/sts/aws4_request" in query["X-Amz-Credential"]
    )
    assert len(query["X-Amz-Signature"]) == 64


def test_the_cluster_name_is_signed():
    session = boto3.session.Session()
    one = parse_qs(urlsplit(_decode(token.token(session, "a", "us-west-2"))).query)["X-Amz-Signature"]
    other = parse_qs(urlsplit(_decode(token.token(session, "b", "us-west-2"))).query)["X-Amz-Signature"]
    assert one != other


def test_exec_credential(monkeypatch):
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    credential = token.exec_credential(boto3.session.Session(), "c", "us-west-2", now=now)
    assert credential["kind"] == "ExecCredential"
    assert credential["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert credential["status"]["expirationTimestamp"] == "2026-01-02T03:18:05Z"
    monkeypatch.setenv("KUBERNETES_EXEC_INFO", json.dumps({"apiVersion": "client.authentication.k8s.io/v1"}))
    assert token.exec_credential(boto3.session.Session(), "c", "us-west-2")["apiVersion"].endswith("/v1")


def test_token_command_prints_json():
    result = CliRunner().invoke(app, ["token", "--cluster", "gpuplane-dev", "--region", "us-west-2"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["status"]["token"].startswith("k8s-aws-v1.")


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--region", "mars-1"], {}, "--region: 'mars-1' is not a region of a supported AWS partition"),
        (["--region", "\x1b[2Jus-west-2"], {}, "--region: '\\x1b[2Jus-west-2' is not a region"),
        ([], {"AWS_REGION": "us-west-9x"}, "AWS_REGION: 'us-west-9x' is not a region"),
    ],
)
def test_a_region_of_no_partition_is_refused_naming_where_it_came_from(monkeypatch, args, env, said):
    # kubectl runs the command with what the kubeconfig says; a region there (or in the environment) that no
    # partition has once ended it with a traceback and exit 1.
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["token", "--cluster", "gpuplane-dev", *args])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert said in text and "allowed: an AWS region such as us-west-2" in text
    assert "No token was printed." in text and "Traceback" not in text and "\x1b" not in result.output
    assert result.stdout.strip() == "" or "ExecCredential" not in result.stdout


def test_kubeconfig_uses_gpuplane_token(aws, tmp_path):
    eks = boto3.client("eks")
    iam = boto3.client("iam")
    role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks.create_cluster(name="gpuplane-dev", roleArn=role, resourcesVpcConfig={"subnetIds": []})
    out = tmp_path / "kc"
    result = CliRunner().invoke(app, ["kubeconfig", "dev", "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = yaml.safe_load(out.read_text())
    user = document["users"][0]["user"]["exec"]
    # `gpuplane` from PATH: no absolute path into this checkout's venv, so the file works for a teammate.
    assert user["command"] == "gpuplane"
    assert user["args"] == ["token", "--cluster", "gpuplane-dev", "--region", "us-west-2"]
    assert document["clusters"][0]["cluster"]["server"].startswith("https://")
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_kubeconfig_for_a_missing_cluster_is_a_clear_error(aws, tmp_path):
    result = CliRunner().invoke(app, ["kubeconfig", "dev", "--out", str(tmp_path / "kc")])
    assert result.exit_code == 1
    assert "EKS cluster 'gpuplane-dev' does not exist in us-west-2" in result.output
    assert "Traceback" not in result.output
