"""Chat LLMs. Providers register themselves by name (e.g. `OpenAI`, `DeepSeek`)."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("llm", ("deepsearcher.llm",))

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["registry"]
