"""Plain data types shared by every layer (the bottom of the dependency graph)."""

from deepsearcher.types.chunk import Chunk
from deepsearcher.types.document import Document, content_hash
from deepsearcher.types.errors import (
    ConfigurationError,
    DeepSearcherError,
    EmbeddingMismatchError,
    LoaderError,
    MissingDependencyError,
    StoreInUseError,
    VectorStoreError,
)
from deepsearcher.types.retrieval import (
    CollectionInfo,
    RetrievalResult,
    deduplicate_results,
)

__all__ = [
    "Chunk",
    "CollectionInfo",
    "ConfigurationError",
    "DeepSearcherError",
    "Document",
    "EmbeddingMismatchError",
    "LoaderError",
    "MissingDependencyError",
    "RetrievalResult",
    "StoreInUseError",
    "VectorStoreError",
    "content_hash",
    "deduplicate_results",
]
