"""Embedding models: text → vectors. Providers register themselves by name."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("embedding", ("deepsearcher.embedding",))

from deepsearcher.embedding.base import BaseEmbedding  # noqa: E402

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["BaseEmbedding", "registry"]
