"""Configuration: YAML settings, provider registries, optional-dependency helpers."""

from deepsearcher.config.optional import require
from deepsearcher.config.registry import ProviderRegistry, register_provider
from deepsearcher.config.settings import FEATURES, Configuration, default_config_path

__all__ = [
    "FEATURES",
    "Configuration",
    "ProviderRegistry",
    "default_config_path",
    "register_provider",
    "require",
]
