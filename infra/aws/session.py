"""boto3 sessions with bounded retries, and AWS failures turned into one-line messages with a fix.

Why one module: every command talks to AWS the same way, and a user who has no credentials, the wrong
region or a throttled account should read what to do, never a botocore stack trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions
from botocore.config import Config

from gpuplane.components.destroy.retries import RETRY_TOTAL_ATTEMPTS, retry_config

__all__ = [
    "RETRY_TOTAL_ATTEMPTS",
    "AwsError",
    "Identity",
    "caller_identity",
    "client",
    "explain",
    "make_session",
    "retry_config",
    "stack_session",
]


class AwsError(Exception):
    """An AWS failure explained: what went wrong and what to do about it."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}. {self.fix}" if self.fix else self.message


@dataclass(frozen=True)
class Identity:
    """Who the credentials belong to."""

    account: str
    arn: str


def make_session(region: str | None, profile: str | None = None) -> boto3.session.Session:
    """A session for `region` (else the profile's) and the named profile; AwsError for an unknown profile."""
    try:
        return boto3.session.Session(region_name=region or None, profile_name=profile)
    except botocore.exceptions.ProfileNotFound as exc:
        raise AwsError(f"AWS profile '{profile}' is not configured", "Check ~/.aws/config or drop --profile") from exc


def stack_session(
    region: str, profile: str | None = None, assume_roles: tuple[str, ...] = (), session_name: str = "gpuplane"
) -> boto3.session.Session:
    """The identity `pulumi up` uses for a stack: its `aws:profile`, then each role of `aws:assumeRoles` in turn.

    Every command that calls AWS for a stack goes through here, so preflight, janitor and kubeconfig act
    as the same principal as the stack's AWS provider, not as whatever the environment holds.
    """
    session = make_session(region, profile)
    for arn in assume_roles:
        try:
            answer = client(session, "sts").assume_role(RoleArn=arn, RoleSessionName=session_name)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise explain(exc, f"assuming role {arn} (aws:assumeRoles)") from None
        creds = answer["Credentials"]
        session = boto3.session.Session(
            aws_access_key_id=creds["AccessKeyId"],
            aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"],
            region_name=region,
        )
    return session


def client(session: boto3.session.Session, service: str, config: Config | None = None) -> Any:
    """A client with standard-mode retries: throttling and transient errors back off, bounded in attempts.

    `AWS_ENDPOINT_URL` (botocore's own setting) redirects every client, which is how the tests point the
    commands at a moto server.
    """
    retries = retry_config()
    return session.client(service, config=retries.merge(config) if config else retries)


_CREDENTIAL_CODES = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "AuthFailure",
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
        "RequestExpired",
    }
)
_ACCESS_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess"})
_THROTTLE_CODES = frozenset(
    {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException", "SlowDown"}
)


def explain(exc: BaseException, doing: str) -> AwsError:
    """Turn a botocore exception raised while `doing` something into an AwsError with a fix."""
    if isinstance(exc, AwsError):
        return exc
    if isinstance(exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError):
        return AwsError(
            f"{doing}: no AWS credentials found",
            "Set AWS_PROFILE (after `aws sso login`) or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, then run again",
        )
    if isinstance(exc, botocore.exceptions.NoRegionError):
        return AwsError(f"{doing}: no AWS region", "Set aws:region in the stack file or pass --region")
    if isinstance(exc, botocore.exceptions.EndpointConnectionError | botocore.exceptions.ConnectTimeoutError):
        return AwsError(
            f"{doing}: cannot reach the AWS endpoint ({exc})",
            "Check the region name, your network or proxy, and AWS_ENDPOINT_URL if set",
        )
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        message = " ".join(str(error.get("Message", "")).split())
        if message.lower().startswith("<!doctype") or message.lower().startswith("<html"):
            message = "the endpoint answered with an HTML error page"
        message = message if len(message) <= 200 else message[:197] + "..."
        if code in _CREDENTIAL_CODES:
            return AwsError(
                f"{doing}: the AWS credentials were rejected ({code}: {message})",
                "Refresh them (`aws sso login`, new keys) or check that they belong to this partition",
            )
        if code in _ACCESS_CODES:
            return AwsError(
                f"{doing}: access denied ({code}: {message})",
                "Grant the missing permission to this identity, or use a role that has it",
            )
        if code in _THROTTLE_CODES:
            return AwsError(
                f"{doing}: AWS kept throttling after {RETRY_TOTAL_ATTEMPTS} attempts ({code})",
                "Wait a minute and run again; it is safe to repeat",
            )
        if code in {"OptInRequired", "InvalidRegion"} or "not enabled" in message.lower():
            return AwsError(
                f"{doing}: the region is not enabled for this account ({code}: {message})",
                "Enable the region in the account settings or pick another aws:region",
            )
        return AwsError(f"{doing}: {code}: {message}")
    if isinstance(exc, botocore.exceptions.BotoCoreError):
        return AwsError(f"{doing}: {exc}")
    return AwsError(f"{doing}: {type(exc).__name__}: {exc}")


def caller_identity(session: boto3.session.Session) -> Identity:
    """The account and ARN of the credentials; raises AwsError with a fix when there are none."""
    try:
        answer = client(session, "sts").get_caller_identity()
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise explain(exc, "checking the AWS credentials") from None
    return Identity(account=str(answer["Account"]), arn=str(answer["Arn"]))
