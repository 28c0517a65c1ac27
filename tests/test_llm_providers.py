"""Every provider: registration, defaults, keys, extras; the SDK-backed ones against the
scripted server where it speaks their API (Anthropic, Azure, Gemini, Bedrock, LiteLLM)."""

from __future__ import annotations

import importlib

import pytest

from deepsearcher.config.optional import is_installed
from deepsearcher.llm import registry
from deepsearcher.llm.anthropic_llm import to_anthropic
from deepsearcher.llm.base import BaseLLM, Usage
from deepsearcher.llm.bedrock_llm import to_converse
from deepsearcher.llm.errors import LLMError, MissingAPIKeyError
from deepsearcher.llm.gemini_llm import to_gemini
from deepsearcher.llm.openai_llm import OpenAI
from deepsearcher.testing import Fail, scripted_llm_fixture
from deepsearcher.types.errors import ConfigurationError, MissingDependencyError

server = scripted_llm_fixture(name="server", fallback="scripted answer here")

FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}

COMPATIBLE = [
    ("DeepSeek", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    ("SiliconFlow", "https://api.siliconflow.cn/v1", "SILICONFLOW_API_KEY"),
    ("TogetherAI", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    ("XAI", "https://api.x.ai/v1", "XAI_API_KEY"),
    ("PPIO", "https://api.ppinfra.com/v3/openai", "PPIO_API_KEY"),
    ("Novita", "https://api.novita.ai/v3/openai", "NOVITA_API_KEY"),
    ("Volcengine", "https://ark.cn-beijing.volces.com/api/v3", "VOLCENGINE_API_KEY"),
    ("GLM", "https://open.bigmodel.cn/api/paas/v4", "GLM_API_KEY"),
    ("Aliyun", "https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"),
]


def test_every_provider_is_registered():
    names = set(registry.names())
    expected = {name for name, _, _ in COMPATIBLE} | {
        "OpenAI",
        "Ollama",
        "OpenAICompatible",
        "AzureOpenAI",
        "Anthropic",
        "Gemini",
        "Bedrock",
        "LiteLLM",
    }
    assert expected <= names
    for name in expected:
        cls = registry.get(name)
        assert cls.__name__ == name and issubclass(cls, BaseLLM)
    assert registry.info("Gemini").extra == "gemini"
    assert registry.info("Anthropic").extra == "anthropic"
    assert registry.info("Bedrock").extra == "bedrock"
    assert registry.info("LiteLLM").extra == "litellm"
    assert registry.info("Anthropic").env_var == "ANTHROPIC_API_KEY"


def test_provider_modules_import_without_their_sdks():
    for module in ("anthropic_llm", "gemini_llm", "bedrock_llm", "litellm_llm"):
        importlib.import_module(f"deepsearcher.llm.{module}")


@pytest.mark.parametrize(("name", "url", "env_var"), COMPATIBLE)
def test_openai_compatible_defaults(monkeypatch, name, url, env_var):
    cls = registry.get(name)
    monkeypatch.setenv(env_var, "secret")
    llm = cls()
    assert llm.base_url == url and llm.model == cls.default_model and llm.model
    assert isinstance(llm, OpenAI) and llm._api_key == "secret"
    assert registry.info(name).env_var == env_var


@pytest.mark.parametrize(("name", "url", "env_var"), COMPATIBLE)
def test_openai_compatible_missing_key(monkeypatch, name, url, env_var):
    monkeypatch.delenv(env_var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "an-openai-key-must-not-leak")
    llm = registry.get(name)()  # made without a key, as upstream's were; its first call names the key
    with pytest.raises(MissingAPIKeyError) as info:
        llm.chat("hi")
    assert str(info.value) == f"No API key for {name}: set {env_var} or provide_settings.llm.config.api_key."


def test_compatible_provider_talks_to_its_base_url(monkeypatch, server):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds-key")
    llm = registry.get("DeepSeek")(base_url=server.base_url, **FAST)
    assert llm.chat("hi").content == "scripted answer here"
    assert server.requests[-1].authorization == "Bearer ds-key"
    assert server.requests[-1].model == "deepseek-chat"
    server.queue(*[Fail.server_error(503)] * 2)
    llm = registry.get("DeepSeek")(base_url=server.base_url, max_retries=1, **FAST)
    with pytest.raises(
        LLMError,
        match=r"^DeepSeek call failed \(model deepseek-chat at http://127\.0\.0\.1:\d+/v1\): 503 Service Unavailable after 2 attempts",  # noqa: E501 - a literal read better whole
    ):
        llm.chat("hi")


def test_ollama_needs_no_key_and_reads_its_env(monkeypatch, server):
    for name in ("OLLAMA_BASE_URL", "OLLAMA_HOST", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    Ollama = registry.get("Ollama")
    assert Ollama().base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5")
    assert Ollama().base_url == "http://10.0.0.5:11434/v1"
    monkeypatch.setenv("OLLAMA_HOST", "http://gpu-box:9999")
    assert Ollama().base_url == "http://gpu-box:9999/v1"
    assert Ollama(base_url="http://localhost:11434").base_url == "http://localhost:11434/v1"  # DeepSearcher's form
    monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
    llm = Ollama(model="qwen2.5:0.5b")
    assert llm.chat("hi").content == "scripted answer here"
    assert server.requests[-1].model == "qwen2.5:0.5b"


def test_openai_compatible_generic(monkeypatch, server):
    OpenAICompatible = registry.get("OpenAICompatible")
    with pytest.raises(ConfigurationError, match="base_url"):
        OpenAICompatible()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = OpenAICompatible(model="my-model", base_url=server.base_url)
    assert llm.chat("hi", json_mode=True).content == "scripted answer here"
    assert server.requests[-1].json_mode is False  # off unless the server is said to support it
    llm = OpenAICompatible(model="my-model", base_url=server.base_url, api_key="vllm-key", supports_json_mode=True)
    llm.chat("json please", json_mode=True)
    assert server.requests[-1].json_mode is True
    assert server.requests[-1].authorization == "Bearer vllm-key"


def test_azure_openai_against_server(monkeypatch, server):
    AzureOpenAI = registry.get("AzureOpenAI")
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        AzureOpenAI(api_key="k")
    with pytest.raises(MissingAPIKeyError, match="AZURE_OPENAI_API_KEY"):
        AzureOpenAI(azure_endpoint=server.url).chat("hi")
    llm = AzureOpenAI(
        model="my-deployment", api_key="azure-key", azure_endpoint=server.url, api_version="2024-10-21", **FAST
    )
    server.queue(Fail.rate_limit(retry_after=0), "from azure")
    assert llm.chat("hi").content == "from azure"
    request = server.requests[-1]
    assert request.path == "/openai/deployments/my-deployment/chat/completions"
    assert request.headers["api-key"] == "azure-key"


# --------------------------------------------------------------------------- message mapping


MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "system", "content": "Answer in English."},
    {"role": "user", "content": "Q1"},
    {"role": "user", "content": [{"type": "text", "text": "Q2"}]},
    {"role": "assistant", "content": "A"},
    {"role": "tool", "content": "tool output"},
]


def test_message_mapping_for_non_openai_apis():
    system, turns = to_anthropic(MESSAGES)
    assert system == "You are terse.\n\nAnswer in English."
    assert turns == [
        {"role": "user", "content": "Q1\n\nQ2"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "tool output"},
    ]
    system, contents = to_gemini(MESSAGES)
    assert system.startswith("You are terse.")
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[0]["parts"] == [{"text": "Q1\n\nQ2"}]
    blocks, converse = to_converse(MESSAGES)
    assert blocks == [{"text": "You are terse.\n\nAnswer in English."}]
    assert converse[1] == {"role": "assistant", "content": [{"text": "A"}]}
    # a conversation must start with the user
    _, turns = to_anthropic([{"role": "system", "content": "s"}, {"role": "assistant", "content": "hello"}])
    assert turns[0]["role"] == "user" and turns[1] == {"role": "assistant", "content": "hello"}


# --------------------------------------------------------------------------- SDK providers


def test_anthropic(monkeypatch, server):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    Anthropic = registry.get("Anthropic")
    if not is_installed("anthropic"):
        with pytest.raises(MissingDependencyError, match=r"deepsearcher\[anthropic\]"):
            Anthropic(api_key="k")
        return
    with pytest.raises(MissingAPIKeyError, match="No API key for Anthropic: set ANTHROPIC_API_KEY"):
        Anthropic()
    llm = Anthropic(model="claude-test", api_key="k", base_url=server.url, **FAST)
    server.queue(Fail.rate_limit(retry_after=0), Fail.server_error(529), "Claude says hi")
    response = llm.chat([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hello there"}])
    assert response.content == "Claude says hi"
    assert response.usage == Usage(4, 3, 7)
    request = server.requests[-1]
    assert request.api == "anthropic" and request.body["system"] == "Be kind."
    assert request.body["messages"] == [{"role": "user", "content": "hello there"}]
    assert request.body["max_tokens"] == 4096 and server.call_count == 3
    stream = llm.stream("stream me")
    assert list(stream) == ["scripted", " answer", " here"]
    assert stream.usage == Usage(2, 3, 5)
    server.queue(Fail.status(401, "invalid x-api-key"))
    with pytest.raises(LLMError, match="Anthropic call failed .*401 Unauthorized: invalid x-api-key"):
        llm.chat("hi")


def test_gemini(monkeypatch, server):
    Gemini = registry.get("Gemini")
    if not is_installed("google.genai"):
        with pytest.raises(MissingDependencyError) as info:
            Gemini(api_key="k")
        assert "google-genai" in str(info.value) and "pip install 'deepsearcher[gemini]'" in str(info.value)
        assert info.value.extra == "gemini"
        return
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="GEMINI_API_KEY"):
        Gemini()
    llm = Gemini(model="gemini-test", api_key="k", base_url=server.url, **FAST)
    server.queue(Fail.server_error(503), "gemini answer")
    response = llm.chat([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}], json_mode=True)
    assert response.content == "gemini answer" and response.usage == Usage(2, 2, 4)
    assert server.requests[-1].json_mode and server.requests[-1].model == "gemini-test"
    stream = llm.stream("a b")
    assert "".join(stream) == "scripted answer here" and stream.usage.completion_tokens == 3


def test_bedrock(monkeypatch, server):
    Bedrock = registry.get("Bedrock")
    if not is_installed("boto3"):
        with pytest.raises(MissingDependencyError, match=r"'boto3'.*deepsearcher\[bedrock\]"):
            Bedrock()
        return
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(MissingAPIKeyError, match="No AWS credentials for Bedrock"):
        Bedrock()
    llm = Bedrock(model="test-model", aws_access_key_id="a", aws_secret_access_key="b", endpoint_url=server.url, **FAST)
    server.queue(Fail.rate_limit(retry_after=0), "bedrock answer")
    response = llm.chat([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}])
    assert response.content == "bedrock answer" and response.usage == Usage(2, 2, 4)
    assert server.requests[-1].model == "test-model" and server.requests[-1].body["system"] == [{"text": "sys"}]


def test_litellm(server):
    LiteLLM = registry.get("LiteLLM")
    if not is_installed("litellm"):
        with pytest.raises(MissingDependencyError, match=r"'litellm'.*deepsearcher\[litellm\]"):
            LiteLLM()
        return
    llm = LiteLLM(model="openai/scripted-model", api_key="test", base_url=server.base_url, **FAST)
    server.queue(Fail.server_error(500), "via litellm")
    assert llm.chat("hi").content == "via litellm"
    assert server.requests[-1].authorization == "Bearer test"
