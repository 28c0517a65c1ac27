"""The OpenAI-compatible presets are data (deepsearcher/llm/openai_presets.py): each row is a
registered provider class like any other, and a chat through one goes where its row says
(the scripted LLM server on 127.0.0.1, reached through the row's $<SERVICE>_BASE_URL)."""

from __future__ import annotations

import pickle

import pytest

import deepsearcher.llm
from deepsearcher.llm import openai_presets, registry
from deepsearcher.llm.openai_llm import OpenAI
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="scripted answer here")

ROWS = {preset.name: preset for preset in openai_presets.PRESETS}


def test_every_row_is_a_registered_openai_provider_with_an_importable_home() -> None:
    assert set(ROWS) == {
        "AtlasCloud",
        "Aliyun",
        "DeepSeek",
        "GLM",
        "JiekouAI",
        "MiniMax",
        "Novita",
        "PPIO",
        "SiliconFlow",
        "TogetherAI",
        "Volcengine",
        "XAI",
    }
    for name, preset in ROWS.items():
        cls = registry.get(name)
        assert (
            cls is getattr(deepsearcher.llm, name) is getattr(openai_presets, name)
        )  # `from deepsearcher.llm import DeepSeek`
        assert cls.__bases__ == (OpenAI,) and cls.__name__ == cls.__qualname__ == name
        assert pickle.loads(pickle.dumps(cls)) is cls
        info = registry.info(name)
        assert (info.env_var, info.aliases, info.source) == (preset.api_key_env, preset.aliases, "built-in")
        assert cls.base_url_env == (preset.api_key_env.replace("_API_KEY", "_BASE_URL"),)
        assert preset.base_url in (cls.__doc__ or "") and preset.api_key_env in (cls.__doc__ or "")
    assert registry.get("Jiekou.AI") is registry.get("Jiekou") is registry.get("JiekouAI")


@pytest.mark.parametrize("name", ["DeepSeek", "Novita"])  # one row with JSON mode, one without
def test_a_row_chats_through_its_base_url_variable_with_its_model_and_json_mode(
    name: str, server, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = ROWS[name]
    monkeypatch.setenv(preset.api_key_env, "row-key")
    monkeypatch.setenv(preset.base_url_env, server.base_url)
    llm = registry.get(name)(max_retries=0)
    reply = llm.chat([{"role": "user", "content": "hello"}], json_mode=True)
    assert reply.content == "scripted answer here"
    sent = server.requests[-1]
    assert sent.model == preset.default_model and sent.authorization == "Bearer row-key"
    assert sent.json_mode is preset.json_mode  # response_format only where the service accepts it
