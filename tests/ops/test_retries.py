"""The retries every AWS client of gpuplane makes, and what a command says when AWS keeps throttling.

botocore rewrites the `retries` settings it is given when it makes a client (`max_attempts` becomes
`total_max_attempts`); a Config shared between clients then no longer holds what the code reads from it, and the
throttling message read a key that was gone (a KeyError instead of the explanation).
"""

from __future__ import annotations

import boto3
import botocore.exceptions

from gpuplane.infra.aws import session as aws_session


def test_each_client_gets_nine_attempts_in_standard_mode_and_the_settings_stay_the_same(monkeypatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    boto = boto3.session.Session(region_name="us-west-2")
    for _ in range(2):
        made = aws_session.client(boto, "sts")
        retries = made.meta.config.retries
        assert retries["mode"] == "standard"
        assert retries["total_max_attempts"] == aws_session.RETRY_TOTAL_ATTEMPTS == 9
    assert aws_session.retry_config().retries == {"total_max_attempts": 9, "mode": "standard"}


def test_throttling_past_the_retries_is_explained_with_the_number_of_attempts() -> None:
    throttled = botocore.exceptions.ClientError(
        {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "DescribeCluster"
    )
    explained = aws_session.explain(throttled, "reading the cluster")
    assert str(explained).startswith("reading the cluster: AWS kept throttling after 9 attempts (ThrottlingException)")
    assert "run again" in str(explained)
