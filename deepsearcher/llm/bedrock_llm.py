"""Amazon Bedrock through boto3's Converse API (extra: bedrock)."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, AsyncIterator, Union

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.llm._messages import split_system
from deepsearcher.llm._retry import Failure
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.llm.errors import MissingAPIKeyError

_THROTTLED = {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"}
_TRANSIENT = {"ServiceUnavailableException", "InternalServerException", "ModelNotReadyException", "ModelTimeoutException"}


def to_converse(messages: list[Message]) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """(system blocks, messages) for `converse`: text blocks, alternating roles."""
    system, turns = split_system(messages)
    blocks = [{"text": system}] if system else []
    return blocks, [{"role": role, "content": [{"text": text or " "}]} for role, text in turns]


@register_provider("llm", extra="bedrock", requires=("boto3",), env_var="AWS_ACCESS_KEY_ID")
class Bedrock(BaseLLM):
    """A Bedrock model. Config: model (model id or inference profile), region_name (else
    $AWS_REGION / $AWS_DEFAULT_REGION, else us-east-1), aws_access_key_id,
    aws_secret_access_key, aws_session_token, profile_name (else the usual AWS credential
    chain), endpoint_url, max_tokens, temperature, top_p."""

    supports_json_mode = False

    def __init__(
        self,
        model: str = "anthropic.claude-3-5-sonnet-20240620-v1:0",
        region_name: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        *,
        profile_name: str | None = None,
        endpoint_url: str | None = None,
        max_tokens: int | None = 4096,
        temperature: float | None = None,
        top_p: float | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_concurrency: int = 8,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 20.0,
        max_retry_after: float = 120.0,
        **kwargs: Any,
    ) -> None:
        boto3 = require("boto3", extra="bedrock", feature="the Bedrock LLM")
        botocore_config = require("botocore.config", extra="bedrock", feature="the Bedrock LLM")
        self._botocore_exceptions = require("botocore.exceptions", extra="bedrock", feature="the Bedrock LLM")
        region = region_name or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        session = boto3.Session(
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            profile_name=profile_name,
            region_name=region,
        )
        if session.get_credentials() is None:
            raise MissingAPIKeyError(
                "Bedrock",
                "AWS_ACCESS_KEY_ID",
                message=(
                    "No AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), "
                    "or provide_settings.llm.config.aws_access_key_id and aws_secret_access_key."
                ),
            )
        super().__init__(
            model,
            base_url=endpoint_url or f"https://bedrock-runtime.{region}.amazonaws.com",
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            retry_base_delay=retry_base_delay,
            retry_max_delay=retry_max_delay,
            max_retry_after=max_retry_after,
        )
        config = botocore_config.Config(
            retries={"total_max_attempts": 1, "mode": "standard"},  # retries are ours
            read_timeout=self.timeout + 5,
            connect_timeout=min(10.0, self.timeout),
            max_pool_connections=max(10, max_concurrency),
        )
        self._client = session.client("bedrock-runtime", endpoint_url=endpoint_url, config=config)
        self.inference_config = {
            key: value
            for key, value in (("maxTokens", max_tokens), ("temperature", temperature), ("topP", top_p))
            if value is not None
        }
        self.request_params: dict[str, Any] = kwargs

    def _request(self, messages: list[Message], kwargs: dict[str, Any]) -> dict[str, Any]:
        system, turns = to_converse(messages)
        inference = dict(self.inference_config)
        for ours, theirs in (("max_tokens", "maxTokens"), ("temperature", "temperature"), ("top_p", "topP")):
            if ours in kwargs:
                inference[theirs] = kwargs.pop(ours)
        kwargs.pop("json_mode", None)
        kwargs.pop("stream_options", None)
        request: dict[str, Any] = {"modelId": self.model, "messages": turns, **self.request_params, **kwargs}
        if system:
            request["system"] = system
        if inference:
            request["inferenceConfig"] = inference
        return request

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: Any) -> ChatResponse:
        reply = await asyncio.to_thread(self._client.converse, **self._request(messages, dict(kwargs)))
        blocks = ((reply.get("output") or {}).get("message") or {}).get("content") or []
        text = "".join(block.get("text", "") for block in blocks if isinstance(block, dict))
        usage = reply.get("usage") or {}
        return ChatResponse(
            text,
            Usage(usage.get("inputTokens", 0), usage.get("outputTokens", 0), usage.get("totalTokens", 0)),
            model=self.model,
            finish_reason=reply.get("stopReason"),
        )

    async def _astream_once(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[Union[str, Usage]]:
        request = self._request(messages, dict(kwargs))
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def pump() -> None:  # boto3 streams are blocking: read them in a worker thread
            try:
                reply = self._client.converse_stream(**request)
                for event in reply["stream"]:
                    if stop.is_set():
                        break
                    loop.call_soon_threadsafe(queue.put_nowait, ("event", event))
                loop.call_soon_threadsafe(queue.put_nowait, ("end", None))
            except BaseException as exc:  # noqa: BLE001 - handed to the async side
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
                except RuntimeError:
                    pass

        worker = threading.Thread(target=pump, name="bedrock-stream", daemon=True)
        worker.start()
        try:
            while True:
                kind, payload = await queue.get()
                if kind == "end":
                    break
                if kind == "error":
                    raise payload
                if "contentBlockDelta" in payload:
                    text = payload["contentBlockDelta"].get("delta", {}).get("text")
                    if text:
                        yield text
                elif "metadata" in payload:
                    usage = payload["metadata"].get("usage") or {}
                    yield Usage(usage.get("inputTokens", 0), usage.get("outputTokens", 0), usage.get("totalTokens", 0))
        finally:
            stop.set()

    def _classify_error(self, exc: BaseException) -> Failure | None:
        errors = self._botocore_exceptions
        if isinstance(exc, errors.ClientError):
            code = exc.response.get("Error", {}).get("Code", "")
            message = exc.response.get("Error", {}).get("Message", "") or code
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400
            if code in _THROTTLED:
                status = 429
            failure = Failure.from_status(int(status), f"{code}: {message}", exc.response.get("ResponseMetadata", {}).get("HTTPHeaders"))
            if code in _TRANSIENT:
                failure.retryable = True
            return failure
        if isinstance(exc, (errors.ReadTimeoutError, errors.ConnectTimeoutError)):
            return self._timeout_failure()
        if isinstance(exc, errors.EndpointConnectionError):
            return self._connection_failure(exc)
        if isinstance(exc, errors.NoCredentialsError):
            return Failure("fatal", "no AWS credentials found", False, hint="Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE")
        return None
