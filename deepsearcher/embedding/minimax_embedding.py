"""MiniMax's embeddings API (embo-01): its own JSON shape, with query and document modes."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import QUERY, BadResponse, RemoteEmbedding, vector_of


@register_provider("embedding", env_var="MINIMAX_API_KEY")
class MiniMaxEmbedding(RemoteEmbedding):
    """MiniMax (https://api.minimax.io/v1, else $MINIMAX_BASE_URL); key from $MINIMAX_API_KEY.

    embo-01 embeds a query (`type: "query"`) and a stored passage (`type: "db"`) differently,
    so searches use the first and loading the second.
    """

    api_key_env: ClassVar[str | None] = "MINIMAX_API_KEY"
    default_model: ClassVar[str] = "embo-01"
    default_base_url: ClassVar[str] = "https://api.minimax.io/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("MINIMAX_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {"embo-01": 1536}
    max_batch: ClassVar[int] = 32

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        body: dict[str, object] = {"model": self.model, "texts": texts, "type": "query" if kind == QUERY else "db"}
        body.update(self.options)
        return f"{self.base_url}/embeddings", body

    def _vectors(self, data: object, count: int) -> list[list[float]]:
        status = data.get("base_resp") if isinstance(data, dict) else None
        if isinstance(status, dict) and status.get("status_code") not in (None, 0):
            # MiniMax answers 200 with its own error code (e.g. 1004: wrong key, 1002: rate limit)
            raise BadResponse(f"MiniMax error {status.get('status_code')}: {status.get('status_msg', '')}")
        vectors = data.get("vectors") if isinstance(data, dict) else None
        if not isinstance(vectors, list) or len(vectors) != count:
            raise BadResponse(f"expected {count} vectors in 'vectors'")
        return [vector_of(vector) for vector in vectors]
