"""Vector stores. Providers register themselves by name (e.g. `Milvus`)."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("vector_db", ("deepsearcher.vector_db",))

from deepsearcher.vector_db import _upstream  # noqa: E402, F401 - attaches upstream's store shape (the one place)
from deepsearcher.vector_db.base import (  # noqa: E402
    BaseVectorDB,
    CollectionInfo,
    RetrievalResult,
    SourceRecord,
    deduplicate_results,
    normalize_collection_name,
)

__getattr__ = provider_getattr(registry, __name__)
__all__ = [
    "BaseVectorDB",
    "CollectionInfo",
    "RetrievalResult",
    "SourceRecord",
    "deduplicate_results",
    "normalize_collection_name",
    "registry",
]
