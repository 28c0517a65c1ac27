"""Web crawlers: URLs → Documents. Providers register themselves by name."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("web_crawler", ("deepsearcher.loader.web_crawler",))

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["registry"]
