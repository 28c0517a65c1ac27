"""File loaders, one class per file type. Providers register themselves by name."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("file_loader", ("deepsearcher.loader.file_loader",))

from deepsearcher.loader.file_loader.base import BaseLoader  # noqa: E402

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["BaseLoader", "registry"]
