"""Amazon Bedrock through boto3's Converse API (extra: bedrock)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from deepsearcher.config.registry import register_provider
from deepsearcher.llm._messages import split_system
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.transport.aws import botocore_failure, runtime_client
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONObject

logger = logging.getLogger(__name__)


def _usage_of(reply: dict[str, Any]) -> Usage:
    """The token counts of a converse reply or of a stream's metadata event."""
    usage = reply.get("usage") or {}
    return Usage(
        usage.get("inputTokens", 0),
        usage.get("outputTokens", 0),
        usage.get("totalTokens", 0),
    )


def to_converse(
    messages: list[Message],
) -> tuple[list[dict[str, str]], list[JSONObject]]:
    """(system blocks, messages) for `converse`: text blocks, alternating roles."""
    system, turns = split_system(messages)
    blocks = [{"text": system}] if system else []
    return blocks, [{"role": role, "content": [{"text": text or " "}]} for role, text in turns]


@register_provider("llm", extra="bedrock", requires=("boto3",), env_var="AWS_ACCESS_KEY_ID")
class Bedrock(BaseLLM):
    """A Bedrock model. Config: model (model id or inference profile), region_name (else
    $AWS_REGION / $AWS_DEFAULT_REGION / the profile's, else us-east-1), aws_access_key_id,
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
        **kwargs: Any,
    ) -> None:
        super().__init__(model, base_url=endpoint_url, **kwargs)
        self._client, region = runtime_client(
            "Bedrock",
            "llm",
            "the Bedrock LLM",
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            profile_name=profile_name,
            endpoint_url=endpoint_url,
            read_timeout=self.timeout + 5,
            connect_timeout=min(10.0, self.timeout),
            max_pool_connections=max(10, self.max_concurrency),
        )
        self.base_url = endpoint_url or f"https://bedrock-runtime.{region}.amazonaws.com"
        self.inference_config = {
            key: value
            for key, value in (
                ("maxTokens", max_tokens),
                ("temperature", temperature),
                ("topP", top_p),
            )
            if value is not None
        }

    def _request(self, messages: list[Message], kwargs: dict[str, Any]) -> dict[str, object]:
        system, turns = to_converse(messages)
        inference = dict(self.inference_config)
        for ours, theirs in (
            ("max_tokens", "maxTokens"),
            ("temperature", "temperature"),
            ("top_p", "topP"),
        ):
            if ours in kwargs:
                inference[theirs] = kwargs.pop(ours)
        kwargs.pop("json_mode", None)
        kwargs.pop("stream_options", None)
        request: dict[str, object] = {
            "modelId": self.model,
            "messages": turns,
            **self.request_params,
            **kwargs,
        }
        if system:
            request["system"] = system
        if inference:
            request["inferenceConfig"] = inference
        return request

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        reply = await asyncio.to_thread(self._client.converse, **self._request(messages, dict(kwargs)))
        blocks = ((reply.get("output") or {}).get("message") or {}).get("content") or []
        text = "".join(block.get("text", "") for block in blocks if isinstance(block, dict))
        return ChatResponse(
            text,
            _usage_of(reply),
            model=self.model,
            finish_reason=reply.get("stopReason"),
        )

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
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
                except RuntimeError as closed:  # the consumer's loop is gone: nobody is left to raise it to
                    logger.debug(
                        "Bedrock stream failed after its event loop closed (%s): %r",
                        closed,
                        exc,
                    )

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
                    yield _usage_of(payload["metadata"])
        finally:
            stop.set()

    def _classify_error(self, exc: BaseException) -> Failure | None:
        return botocore_failure(exc, timeout=self._timeout_failure, connection=self._connection_failure)
