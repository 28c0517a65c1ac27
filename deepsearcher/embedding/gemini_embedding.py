"""Google Gemini embeddings over the REST API (batchEmbedContents), no SDK needed."""

from __future__ import annotations

from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import QUERY, BadResponse, RemoteEmbedding, vector_of


@register_provider("embedding", env_var="GEMINI_API_KEY")
class GeminiEmbedding(RemoteEmbedding):
    """Gemini API embeddings; key from $GEMINI_API_KEY (or $GOOGLE_API_KEY).

    Queries use taskType RETRIEVAL_QUERY, stored passages RETRIEVAL_DOCUMENT;
    `dimension` sets outputDimensionality (gemini-embedding-001: 768, 1536 or 3072).
    """

    api_key_env: ClassVar[str | None] = "GEMINI_API_KEY"
    api_key_fallback_env: ClassVar[tuple[str, ...]] = ("GOOGLE_API_KEY",)
    default_model: ClassVar[str] = "gemini-embedding-001"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"
    base_url_env: ClassVar[tuple[str, ...]] = ("GEMINI_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "gemini-embedding-001": 3072,
        "text-embedding-004": 768,
        "embedding-001": 768,
    }
    known_windows: ClassVar[dict[str, int]] = {  # input token limit; a longer text is cut unseen
        "gemini-embedding-001": 2048,
        "text-embedding-004": 2048,
        "embedding-001": 2048,
    }
    max_batch: ClassVar[int] = 100  # requests per batchEmbedContents call

    def __init__(self, model: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(model.removeprefix("models/") if model else None, *args, **kwargs)

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key or "", **self.extra_headers}

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        task = "RETRIEVAL_QUERY" if kind == QUERY else "RETRIEVAL_DOCUMENT"
        requests = []
        for text in texts:
            request: dict[str, object] = {
                "model": f"models/{self.model}",
                "content": {"parts": [{"text": text}]},
                "taskType": task,
            }
            if self.requested_dimension:
                request["outputDimensionality"] = self.requested_dimension
            request.update(self.options)
            requests.append(request)
        return f"{self.base_url}/models/{self.model}:batchEmbedContents", {"requests": requests}

    def _vectors(self, data: object, count: int) -> list[list[float]]:
        embeddings = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(embeddings, list) or len(embeddings) != count:
            raise BadResponse(f"expected {count} items in 'embeddings'")
        return [vector_of(item.get("values") if isinstance(item, dict) else None) for item in embeddings]
