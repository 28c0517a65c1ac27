"""A deterministic, instant embedding for tests that start many real `deepsearcher` processes
(the crash-injection sweep): the bundled model takes seconds to load in every process, and
what those tests check (which chunks are stored, how many were embedded) does not depend on
the vectors' meaning. Configure it as provider `deepsearcher.testing.hash_embedding:HashEmbedding`.
Importing it installs the sweep's crash hook (`crash_points`: inert unless DEEPSEARCHER_CRASH_AT is set)."""

from __future__ import annotations

import hashlib

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.testing import crash_points


class HashEmbedding(BaseEmbedding):
    """`dim` floats in [-1, 1] from the SHA-256 of the text: same text, same vector, any process."""

    def __init__(self, dim: int = 16) -> None:
        self.dim = int(dim)
        self.model_name = f"sha256-hash-{self.dim}"

    def embed_query(self, text: str) -> list[float]:
        digest = b""
        counter = 0
        while len(digest) < self.dim:
            digest += hashlib.sha256(f"{counter}:{text}".encode()).digest()
            counter += 1
        return [byte / 127.5 - 1.0 for byte in digest[: self.dim]]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    @property
    def dimension(self) -> int:
        return self.dim


crash_points.install()
