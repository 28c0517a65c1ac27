"""Embedding models served by a local Ollama (POST /api/embed): no key, no cloud.

No text is cut off: requests say `truncate: false`, so Ollama refuses a text past the model's
context ("the input length exceeds the context length", 400) instead of dropping its end (the
old `truncate: true` did, silently; Ollama 0.13.5+ refuses either way). A refused batch is sent
again text by text, and a text still refused is embedded as two halves, each as far as needed,
its vector the length-weighted mean of theirs (`_windows`), as the bundled model does with its
token windows. Ollama's tokenizer is not at hand here, so the cut is by characters.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import BadResponse, EmbeddingError, RemoteEmbedding, vector_of
from deepsearcher.embedding._windows import halves, pool_windows

logger = logging.getLogger(__name__)

#: How Ollama words its refusal of a text longer than the model's context.
_TOO_LONG = "context length"


@register_provider("embedding")
class OllamaEmbedding(RemoteEmbedding):
    """An Ollama server (base_url, else $OLLAMA_HOST, else http://localhost:11434).

    Pull the model first (`ollama pull bge-m3`). Models trained with instructions want
    prefixes, e.g. nomic-embed-text: query_prefix "search_query: ", document_prefix
    "search_document: ".
    """

    requires_api_key: ClassVar[bool] = False
    api_key_env: ClassVar[str | None] = "OLLAMA_API_KEY"  # only for a server behind an authenticating proxy
    default_model: ClassVar[str] = "bge-m3"
    default_base_url: ClassVar[str] = "http://localhost:11434"
    base_url_env: ClassVar[tuple[str, ...]] = ("OLLAMA_HOST",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "bge-m3": 1024,
        "nomic-embed-text": 768,
        "mxbai-embed-large": 1024,
        "all-minilm": 384,
        "snowflake-arctic-embed": 1024,
        "snowflake-arctic-embed2": 1024,
        "bge-large": 1024,
        "granite-embedding": 384,
        "embeddinggemma": 768,
        "qwen3-embedding": 4096,
    }
    max_batch: ClassVar[int] = 64

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, api_key, base_url, dimension, **kwargs)
        if not self.base_url.startswith(("http://", "https://")):
            self.base_url = f"http://{self.base_url}"  # OLLAMA_HOST is often "127.0.0.1:11434"
        self.base_url = self.base_url.removesuffix("/v1")  # the OpenAI-compatible prefix: /api/embed is beside it
        if self._dimension is None and self.model.endswith(":latest"):
            self._dimension = self.known_dimensions.get(self.model[: -len(":latest")])

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "truncate": False}
        if self.requested_dimension:
            body["dimensions"] = self.requested_dimension
        body.update(self.options)
        return f"{self.base_url}/api/embed", body

    def _vectors(self, data: Any, count: int) -> list[list[float]]:
        embeddings = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(embeddings, list) or len(embeddings) != count:
            raise BadResponse(f"expected {count} vectors in 'embeddings'")
        return [vector_of(vector) for vector in embeddings]

    def _embed_batch(self, texts: list[str], kind: str) -> list[list[float]]:
        try:
            return super()._embed_batch(texts, kind)
        except EmbeddingError as exc:
            if exc.status != 400 or _TOO_LONG not in exc.reason:
                raise
            if len(texts) > 1:  # find the texts that are too long: one request each
                return [vector for text in texts for vector in self._embed_batch([text], kind)]
            parts = halves(texts[0])
            if parts is None:
                raise
        logger.info(
            "Ollama model %s refused a text of %d characters as longer than its context: embedded in two halves",
            self.model,
            len(texts[0]),
        )
        vectors = [self._embed_batch([part], kind)[0] for part in parts]
        return pool_windows(1, [0, 0], [len(part) for part in parts], vectors, normalize=True)
