"""Web search APIs: a query → normalised results (title, url, snippet, date). Providers register by name.

Only the agents' web source calls them, with queries written from the user's question (never from
private chunks unless the user opts in): see deepsearcher/agent/web_source.py.
"""

from deepsearcher.config.lazy_exports import provider_getattr
from deepsearcher.config.registry import ProviderRegistry

registry = ProviderRegistry("web_search", ("deepsearcher.web_search",))

__getattr__ = provider_getattr(registry, __name__)
__all__ = ["registry"]
