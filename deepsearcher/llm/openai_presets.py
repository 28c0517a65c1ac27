"""Hosted OpenAI-compatible APIs as data: one row per service instead of one near-empty
subclass each.

A row names the provider (the name config.yaml and `from deepsearcher.llm import ...`
use), its base URL, the environment variable holding its key, its default model and
whether it accepts JSON mode. Each row becomes a subclass of `OpenAI` registered through
the same `@register_provider` hook every other provider uses, so the registry, `deepsearcher
providers` and the error messages cannot tell a preset from a hand-written provider.
Adding a service is adding a row; a service that needs code of its own (Azure, Ollama, a
required base_url) stays a class in its own file.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI

__all__ = ["PRESETS", "OpenAIPreset", "preset_class", "preset_named"]


@dataclass(frozen=True)
class OpenAIPreset:
    """One hosted OpenAI-compatible service."""

    name: str
    about: str
    base_url: str
    api_key_env: str
    default_model: str
    json_mode: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def base_url_env(self) -> str:
        """$<SERVICE>_BASE_URL overrides the default URL (DEEPSEEK_API_KEY → DEEPSEEK_BASE_URL)."""
        return self.api_key_env.removesuffix("_API_KEY") + "_BASE_URL"


PRESETS: tuple[OpenAIPreset, ...] = (
    OpenAIPreset(
        "AtlasCloud",
        "Atlas Cloud's OpenAI-compatible API (DeepSeek, Qwen, GLM, Kimi models).",
        "https://api.atlascloud.ai/v1",
        "ATLASCLOUD_API_KEY",
        "deepseek-ai/deepseek-v4-pro",
        aliases=("Atlas Cloud",),
    ),
    OpenAIPreset(
        "Aliyun",
        "Alibaba Cloud DashScope (Qwen) in OpenAI-compatible mode.",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "DASHSCOPE_API_KEY",
        "qwen-plus",
        json_mode=True,
    ),
    OpenAIPreset(
        "DeepSeek",
        "DeepSeek's API (deepseek-chat; deepseek-reasoner thinks before answering).",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        "deepseek-chat",
        json_mode=True,
    ),
    OpenAIPreset(
        "GLM",
        "Zhipu's GLM models (OpenAI-compatible API).",
        "https://open.bigmodel.cn/api/paas/v4",
        "GLM_API_KEY",
        "glm-4-plus",
        json_mode=True,
    ),
    OpenAIPreset(
        "JiekouAI",
        "Jiekou.AI's OpenAI-compatible API.",
        "https://api.jiekou.ai/openai/v1",
        "JIEKOU_API_KEY",
        "claude-sonnet-4-5-20250929",
        aliases=("Jiekou.AI", "Jiekou"),
    ),
    OpenAIPreset(
        "MiniMax",
        "MiniMax's OpenAI-compatible API (MiniMax-M2.7; MiniMax-M2.5-highspeed is faster).",
        "https://api.minimax.io/v1",
        "MINIMAX_API_KEY",
        "MiniMax-M2.7",
    ),
    OpenAIPreset(
        "Novita",
        "Novita AI's OpenAI-compatible API.",
        "https://api.novita.ai/v3/openai",
        "NOVITA_API_KEY",
        "deepseek/deepseek-v3-0324",
    ),
    OpenAIPreset(
        "PPIO",
        "PPIO's OpenAI-compatible API.",
        "https://api.ppinfra.com/v3/openai",
        "PPIO_API_KEY",
        "deepseek/deepseek-v3",
    ),
    OpenAIPreset(
        "SiliconFlow",
        "SiliconFlow's OpenAI-compatible API.",
        "https://api.siliconflow.cn/v1",
        "SILICONFLOW_API_KEY",
        "deepseek-ai/DeepSeek-V3",
    ),
    OpenAIPreset(
        "TogetherAI",
        "Together AI's OpenAI-compatible API.",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        "deepseek-ai/DeepSeek-V3",
        json_mode=True,
    ),
    OpenAIPreset(
        "Volcengine",
        "Volcengine Ark (ByteDance) OpenAI-compatible API; the model may be an endpoint id.",
        "https://ark.cn-beijing.volces.com/api/v3",
        "VOLCENGINE_API_KEY",
        "deepseek-v3-250324",
    ),
    OpenAIPreset(
        "XAI",
        "xAI's Grok models (OpenAI-compatible API).",
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        "grok-4",
        json_mode=True,
    ),
)


def preset_class(preset: OpenAIPreset) -> type[OpenAI]:
    """The `OpenAI` subclass a row stands for, registered under its name (and aliases)."""
    namespace = {
        "__module__": __name__,
        "__qualname__": preset.name,
        "__doc__": (
            f"{preset.about}\n\nKey: ${preset.api_key_env} or config api_key; base_url defaults to {preset.base_url}."
        ),
        "default_model": preset.default_model,
        "default_base_url": preset.base_url,
        "api_key_env": preset.api_key_env,
        "base_url_env": (preset.base_url_env,),
        "requires_api_key": True,
        "supports_json_mode": preset.json_mode,
    }
    cls = type(preset.name, (OpenAI,), namespace)
    return register_provider("llm", env_var=preset.api_key_env, aliases=preset.aliases)(cls)


# module attributes too, so each class has an importable home (pickling, repr, `help`)
for _preset in PRESETS:
    globals()[_preset.name] = preset_class(_preset)


def preset_named(name: str) -> type[OpenAI]:
    """The class made for the row `name` (upstream's per-service modules alias it)."""
    cls: type[OpenAI] = globals()[name]
    return cls
