"""What the Bedrock LLM and the Bedrock embedding share: the boto3 client and its errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from deepsearcher.config.optional import require
from deepsearcher.transport.retry import Failure
from deepsearcher.types.errors import MissingAPIKeyError
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: Error codes that mean "slow down" (answered like a 429) or "try again" (retryable).
THROTTLED = frozenset({"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"})
TRANSIENT = frozenset(
    {
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)


def runtime_client(
    provider: str,
    section: str,
    feature: str,
    *,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
    profile_name: str | None,
    endpoint_url: str | None,
    read_timeout: float,
    connect_timeout: float,
    max_pool_connections: int | None = None,
) -> tuple[BaseClient, str]:
    """(boto3 bedrock-runtime client, its region).

    Credentials come from the arguments or boto3's usual chain ($AWS_ACCESS_KEY_ID /
    $AWS_SECRET_ACCESS_KEY, $AWS_PROFILE, instance roles); none is a MissingAPIKeyError
    naming `provide_settings.<section>.config`; no boto3 a MissingDependencyError naming
    `feature`. The region is `region_name`, else
    $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, else us-east-1. The client makes one
    attempt per call: the shared retry policy does the retrying.
    """
    boto3 = require("boto3", extra="bedrock", feature=feature)
    botocore_config = require("botocore.config", extra="bedrock", feature=feature)
    session = boto3.Session(
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        profile_name=profile_name,
    )
    if session.get_credentials() is None:
        raise MissingAPIKeyError(
            provider,
            "AWS_ACCESS_KEY_ID",
            message=(
                f"No AWS credentials for {provider}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), "
                f"or provide_settings.{section}.config.aws_access_key_id and aws_secret_access_key."
            ),
        )
    region = (
        region_name
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or session.region_name
        or "us-east-1"
    )
    options: JSONObject = {
        "retries": {"total_max_attempts": 1, "mode": "standard"},
        "read_timeout": read_timeout,
        "connect_timeout": connect_timeout,
    }
    if max_pool_connections:
        options["max_pool_connections"] = max_pool_connections
    client = session.client(
        "bedrock-runtime",
        region_name=region,
        endpoint_url=endpoint_url,
        config=botocore_config.Config(**options),
    )
    return client, region


def botocore_failure(
    exc: BaseException,
    *,
    timeout: Callable[[], Failure],
    connection: Callable[[BaseException], Failure],
) -> Failure | None:
    """botocore's exceptions as retry decisions (ThrottlingException is a 429, ServiceUnavailable
    is retried, ...); `timeout` and `connection` build the caller's own wording for those."""
    errors = require("botocore.exceptions", extra="bedrock", feature="Bedrock")
    if isinstance(exc, errors.ClientError):
        error = exc.response.get("Error") or {}
        meta = exc.response.get("ResponseMetadata") or {}
        code = error.get("Code", "")
        detail = ": ".join(part for part in (code, error.get("Message", "")) if part)
        status = 429 if code in THROTTLED else int(meta.get("HTTPStatusCode") or 500)
        failure = Failure.from_status(status, detail, meta.get("HTTPHeaders") or {})
        if code in TRANSIENT:
            failure.retryable = True
        return failure
    if isinstance(exc, (errors.ReadTimeoutError, errors.ConnectTimeoutError)):
        return timeout()
    if isinstance(exc, errors.EndpointConnectionError):
        return connection(exc)
    if isinstance(exc, errors.NoCredentialsError):
        return Failure(
            "fatal",
            "no AWS credentials found",
            False,
            hint="Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE",
        )
    return None
