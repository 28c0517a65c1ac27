"""IBM watsonx.ai chat models over its REST API (`/ml/v1/text/chat`), no SDK needed."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message
from deepsearcher.llm.openai_llm import usage_of
from deepsearcher.transport.retry import RetryableFailure
from deepsearcher.transport.watsonx import iam_token, watsonx_account


@register_provider("llm", env_var="WATSONX_APIKEY", aliases=("watsonx", "Watsonx", "WatsonXLLM"))
class WatsonX(BaseLLM):
    """A watsonx.ai foundation model. Config: model (model_id), api_key (else $WATSONX_APIKEY),
    url (else $WATSONX_URL, e.g. https://us-south.ml.cloud.ibm.com), project_id (else
    $WATSONX_PROJECT_ID) or space_id, iam_url, version; other keys (max_tokens,
    temperature, ...) are sent with every request."""

    def __init__(self, model: str = "ibm/granite-3-3-8b-instruct", **kwargs: Any) -> None:
        self.account = watsonx_account("llm", kwargs)
        super().__init__(model, base_url=self.account.url, **kwargs)

    def _make_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout + 5, connect=min(10.0, self.timeout)))

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        token = await asyncio.to_thread(iam_token, self.account, self.timeout)
        body = {
            "model_id": self.model,
            "messages": messages,
            **self.account.scope(),
            **self.request_params,
            **kwargs,
        }
        response = await self.client.post(
            self.account.endpoint("text/chat"),
            json=body,
            headers={"Authorization": f"Bearer {token}"},
        )
        response.raise_for_status()
        data = response.json()
        choices = data.get("choices") or []
        if not choices:
            raise RetryableFailure(self._bad_response_failure("no choices in the reply"))
        return ChatResponse(
            (choices[0].get("message") or {}).get("content") or "",
            usage_of(data.get("usage")),
            model=data.get("model_id") or self.model,
            finish_reason=choices[0].get("finish_reason"),
        )
