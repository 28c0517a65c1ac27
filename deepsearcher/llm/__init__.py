"""Chat LLMs. Providers register themselves by name (e.g. `OpenAI`, `DeepSeek`)."""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("llm", ("deepsearcher.llm",))

from deepsearcher.llm import _upstream  # noqa: E402, F401 - attaches upstream's chat-model shape (the one place)

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["registry"]
