"""Third-party providers used by the registry tests: one by dotted path, one by entry point."""

from __future__ import annotations

from deepsearcher.embedding.base import BaseEmbedding


class HashEmbedding(BaseEmbedding):
    """A deterministic 8-dim embedding standing in for a third-party plugin."""

    model_name = "hash-8"

    def __init__(self, salt: str = "") -> None:
        self.salt = salt

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float((hash(self.salt + text) >> shift) & 0xFF) for shift in range(0, 64, 8)] for text in texts]

    @property
    def dimension(self) -> int:
        return 8


class PluginEmbedding(HashEmbedding):
    model_name = "plugin-8"
