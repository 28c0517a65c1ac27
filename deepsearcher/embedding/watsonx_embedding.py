"""IBM watsonx.ai embeddings over its REST API (`/ml/v1/text/embeddings`), no SDK needed."""

from __future__ import annotations

from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import BadResponse, RemoteEmbedding, vector_of
from deepsearcher.transport.watsonx import iam_token, watsonx_account


@register_provider("embedding", env_var="WATSONX_APIKEY", aliases=("WatsonxEmbedding",))
class WatsonXEmbedding(RemoteEmbedding):
    """watsonx.ai embedding models (ibm/slate-*, ibm/granite-embedding-*, ...).

    Config: model, api_key (else $WATSONX_APIKEY), url (else $WATSONX_URL), project_id
    (else $WATSONX_PROJECT_ID) or space_id, iam_url, version, max_tokens (inputs are
    truncated by the service to this many tokens, default 512, the models' limit).
    """

    default_model: ClassVar[str] = "ibm/slate-125m-english-rtrvr-v2"
    known_dimensions: ClassVar[dict[str, int]] = {
        "ibm/slate-125m-english-rtrvr-v2": 768,
        "ibm/slate-125m-english-rtrvr": 768,
        "ibm/slate-30m-english-rtrvr-v2": 384,
        "ibm/slate-30m-english-rtrvr": 384,
        "ibm/granite-embedding-278m-multilingual": 768,
        "ibm/granite-embedding-107m-multilingual": 384,
        "sentence-transformers/all-minilm-l6-v2": 384,
        "sentence-transformers/all-minilm-l12-v2": 384,
        "intfloat/multilingual-e5-large": 1024,
    }
    max_batch: ClassVar[int] = 1000  # the service's documented maximum of inputs per request
    requires_api_key: ClassVar[bool] = False  # resolved by watsonx_account (key, URL and project together)

    def __init__(self, model: str | None = None, max_tokens: int = 512, **kwargs: Any) -> None:
        self.account = watsonx_account("embedding", kwargs)
        self.max_tokens = int(max_tokens)
        super().__init__(model, None, self.account.url, **kwargs)

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {iam_token(self.account, self.policy.timeout)}",
            **self.extra_headers,
        }

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        body = {
            "inputs": texts,
            "model_id": self.model,
            **self.account.scope(),
            "parameters": {"truncate_input_tokens": self.max_tokens},
            **self.options,
        }
        return self.account.endpoint("text/embeddings"), body

    def _vectors(self, data: object, count: int) -> list[list[float]]:
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list) or len(results) != count:
            raise BadResponse(f"expected {count} results, got {len(results) if isinstance(results, list) else 'none'}")
        return [vector_of(item.get("embedding") if isinstance(item, dict) else None) for item in results]
