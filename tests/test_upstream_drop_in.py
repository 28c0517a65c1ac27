"""What a DeepSearcher user's own code and tests rely on besides import paths: the factory
builds a class patched onto the package, an SDK's exception is the cause of our LLMError, and
a store takes chunks shaped as upstream's (no `index_text`). Real SDK against the scripted
server on 127.0.0.1, real Milvus Lite in a temp dir."""

from __future__ import annotations

from unittest.mock import patch

import openai
import pytest

from deepsearcher.configuration import Configuration, ModuleFactory
from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.errors import LLMError
from deepsearcher.llm.openai_llm import OpenAI
from deepsearcher.testing import Fail, scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="reply")


class FakeLLM:
    """A user's test double, built the way DeepSearcher's factory built providers."""

    def __init__(self, model: str = "none", **kwargs: object) -> None:
        self.model = model
        self.kwargs = kwargs


def test_the_factory_builds_a_class_patched_onto_the_package() -> None:
    config = Configuration()
    config.set_provider_config("llm", "OpenAI", {"model": "gpt-test", "temperature": 0.1})
    with patch("deepsearcher.llm.OpenAI", FakeLLM):
        llm = ModuleFactory(config).create_llm()
        assert ModuleFactory(config).provider_class("llm") is FakeLLM
    assert isinstance(llm, FakeLLM) and llm.model == "gpt-test" and llm.kwargs == {"temperature": 0.1}
    assert ModuleFactory(config).provider_class("llm") is OpenAI  # the patch is gone again

    with patch("deepsearcher.llm.OpenAI") as mocked:  # a MagicMock, called as DeepSearcher called it
        ModuleFactory(config).create_llm()
    mocked.assert_called_once_with(model="gpt-test", temperature=0.1)


class UpstreamChat(BaseLLM):
    """A DeepSearcher-shaped chat model a user's test patches in for OpenAI."""

    def __init__(self, model: str = "none", **kwargs: object) -> None:
        self.model = model

    def chat(self, messages: list[dict[str, str]]) -> ChatResponse:
        return ChatResponse("fake", 1)


def test_init_config_builds_a_class_patched_onto_the_package(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As upstream's `init_config` (its factory read the class off the package): the patched class is
    built, and the agents use it."""
    from deepsearcher import configuration as module

    monkeypatch.setattr(module, "_current", module._current)  # the process's components, restored after
    config = Configuration()
    config.set_provider_config("llm", "OpenAI", {"model": "gpt-test"})
    config.set_provider_config("embedding", "deepsearcher.testing.hash_embedding:HashEmbedding", {})
    config.set_provider_config("vector_db", "Milvus", {"uri": str(tmp_path / "milvus.db")})
    with patch("deepsearcher.llm.OpenAI", UpstreamChat):
        module.init_config(config)
    llm = module.llm
    assert isinstance(llm, UpstreamChat) and llm.model == "gpt-test"
    assert module.naive_rag.llm is llm and llm.chat([{"role": "user", "content": "hi"}]).content == "fake"
    module.current().close()


def test_a_module_named_like_a_provider_alias_is_not_taken_for_a_patch() -> None:
    import deepsearcher.llm.watsonx  # noqa: F401 - now an attribute `watsonx` of deepsearcher.llm

    config = Configuration()
    config.set_provider_config("llm", "watsonx", {})
    assert ModuleFactory(config).provider_class("llm").__name__ == "WatsonX"


def test_the_sdk_exception_is_the_cause_of_llm_error(server) -> None:
    server.queue(Fail.status(400, "bad model parameter", request_id="req_abc123"))
    llm = server.llm(max_retries=0, timeout=5)
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    cause = info.value.__cause__
    assert isinstance(cause, openai.BadRequestError) and cause.status_code == 400
    assert cause.request_id == "req_abc123" == info.value.request_id
    assert info.value.status == 400 and "bad model parameter" in str(info.value)


def test_a_stream_failure_keeps_its_cause_too(server) -> None:
    server.queue(Fail.status(401, "invalid key", request_id="req_stream"))
    llm = server.llm(max_retries=0, timeout=5)
    with pytest.raises(LLMError) as info:
        "".join(llm.stream("hi"))
    assert isinstance(info.value.__cause__, openai.AuthenticationError)
    assert info.value.request_id == "req_stream" and info.value.status == 401


def test_milvus_inserts_upstream_shaped_chunks(tmp_path) -> None:
    import numpy as np

    from deepsearcher.vector_db import Milvus, RetrievalResult

    rng = np.random.default_rng(seed=19530)
    vectors = rng.random((3, 8))
    texts = ["hello world", "hello milvus", "hello llm"]
    store = Milvus(uri=str(tmp_path / "milvus.db"))
    try:
        store.init_collection(dim=8, collection="upstream")
        chunks = [
            RetrievalResult(embedding=vector, text=text, reference="local file: hi.txt", metadata={"a": 1})
            for vector, text in zip(vectors, texts, strict=True)
        ]
        assert store.insert_data(collection="upstream", chunks=chunks) == 3
        [best] = store.search_data(collection="upstream", vector=vectors[1], top_k=1)
    finally:
        store.close()
    assert (best.text, best.reference, best.metadata["a"]) == ("hello milvus", "local file: hi.txt", 1)
