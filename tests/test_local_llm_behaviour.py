"""What a small model on a one-slot local server showed, each handled (issue 20 item 1), on the
scripted OpenAI-compatible server: one-slot limits for local servers, token usage estimated when a
stream reports none, a JSON-mode object of strings read as a list, the deep agents falling back to
the best retrieved chunks when the judge rejects everything (never answering from no sources), and
each chunk judged against every sub-query that found it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import last_request

from deepsearcher.agent import ChainOfRAG, DeepSearch, NaiveRAG
from deepsearcher.agent import prompts as agent_prompts
from deepsearcher.app.components import build_components
from deepsearcher.app.querying import DEFAULT_QUERY_TIMEOUT, query_timeout
from deepsearcher.config import Configuration
from deepsearcher.llm.local_servers import LOCAL_LIMITS, LOCAL_QUERY_TIMEOUT, detect_local_server
from deepsearcher.llm.ollama_llm import Ollama
from deepsearcher.llm.openai_compatible_llm import OpenAICompatible
from deepsearcher.llm.parsing import parse_list
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="NO")
FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}
JUDGE = "Does the passage below contain"
ANSWER = "Answer the question using only the numbered sources"


@pytest.fixture
def store(science_store):
    return science_store


@pytest.mark.parametrize(
    ("url", "named", "expected"),
    [
        ("http://127.0.0.1:11434/v1", None, "Ollama"),
        ("http://localhost:8080/v1", None, "llama.cpp"),
        ("http://192.168.1.9:1234/v1", None, "LM Studio"),
        ("http://gpu-box:8000/v1", None, "vLLM"),
        ("http://127.0.0.1:8765/v1", "llama.cpp", "llama.cpp"),
        ("http://127.0.0.1:8765/v1", True, "local server"),
        ("http://127.0.0.1:8080/v1", False, None),
        ("https://api.deepseek.com", None, None),
    ],
)
def test_local_servers_are_recognised_by_port_or_name(url: str, named, expected) -> None:
    assert detect_local_server(url, named) == expected


def test_a_local_server_starts_from_one_slot_limits_and_config_still_wins() -> None:
    llm = OpenAICompatible(model="m", base_url="http://127.0.0.1:8080/v1")
    assert llm.local_server == "llama.cpp" and llm.max_concurrency == 1
    assert llm.timeout == LOCAL_LIMITS["timeout"] and llm.policy.call_timeout == LOCAL_LIMITS["call_timeout"]
    assert llm.query_timeout_hint == LOCAL_QUERY_TIMEOUT
    tuned = OpenAICompatible(model="m", base_url="http://127.0.0.1:8080/v1", max_concurrency=2, timeout=60)
    assert tuned.max_concurrency == 2 and tuned.timeout == 60
    assert Ollama().max_concurrency == 1
    hosted = OpenAICompatible(model="m", base_url="http://127.0.0.1:9/v1")
    assert hosted.local_server is None and hosted.max_concurrency == 8 and hosted.query_timeout_hint is None
    with pytest.raises(ValueError, match="Unknown local_server 'kobold'"):
        OpenAICompatible(model="m", base_url="http://x:1/v1", local_server="kobold")


def test_a_local_llm_gives_the_query_a_long_default_deadline(tmp_path: Path, milvus_uri: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "provide_settings:\n  llm:\n    provider: OpenAICompatible\n    config:\n      model: m\n"
        "      base_url: http://127.0.0.1:8080/v1\n      local_server: llama.cpp\n"
        f'  vector_db:\n    provider: Milvus\n    config:\n      uri: "{milvus_uri}"\n',
        encoding="utf-8",
    )
    components = build_components(Configuration(str(config)))
    try:
        assert query_timeout(components) == LOCAL_QUERY_TIMEOUT > DEFAULT_QUERY_TIMEOUT
        assert query_timeout(components, 5) == 5
    finally:
        components.vector_db.close()


def test_a_stream_without_usage_is_estimated_and_marked(server) -> None:
    server.on("hello", "Hello there, how can I help you today?")
    llm = server.llm(stream_usage=False, **FAST)  # like llama.cpp's server: no usage chunk
    stream = llm.stream("hello")
    assert "".join(stream) == "Hello there, how can I help you today?"
    assert stream.usage.estimated and stream.usage.completion_tokens >= 8 and stream.usage.prompt_tokens > 0
    reported = server.llm(**FAST).stream("hello")
    list(reported)
    assert not reported.usage.estimated and reported.usage.completion_tokens == 8  # the server's word count


def test_a_json_mode_object_of_strings_is_a_list() -> None:
    reply = '{"query1": "Who founded the Halvorsen lab?", "query2": "What did it discover?"}'
    assert parse_list(reply) == ["Who founded the Halvorsen lab?", "What did it discover?"]
    assert parse_list('{"queries": ["a", "b"], "note": "x"}') == ["a", "b"]
    assert parse_list("{ }") == []  # the 0.5B's "none" under llama.cpp's JSON grammar


def test_deep_search_falls_back_to_the_best_chunks_when_the_judge_rejects_all(server, store, embedding) -> None:
    server.on("Break the question below", '["first compiler"]')
    server.on(JUDGE, "NO")
    server.on(ANSWER, "Grace Hopper [1].")
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1, top_k=3)
    result = agent.query_result("Who built the first compiler?")
    fallback = next(step for step in result.steps if step.kind == "fallback")
    assert fallback.data["kept"] == 3 and fallback.data["step"] == "judge"  # top_k; its order: test_deep_search_fusion
    assert len(result.retrieved_results) == 3 and result.answer.startswith("Grace Hopper")
    answer_prompt = last_request(server, ANSWER).last_user_message
    assert "(no sources found)" not in answer_prompt and "Hopper" in answer_prompt


def test_chain_of_rag_falls_back_when_no_passage_is_marked_supporting(server, store, embedding) -> None:
    server.on("single next follow-up question", "Who built the first compiler?")
    server.on("Answer the question using only the passages", "Grace Hopper.")
    server.on("Which passages support", "[]")
    server.on("Is the information below enough", "YES")
    server.on("step-by-step findings", "Grace Hopper [1].")
    agent = ChainOfRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1)
    result = agent.query_result("Who built the first compiler?")
    assert any(step.kind == "fallback" and step.data["step"] == "supporting_docs" for step in result.steps)
    assert result.sources and result.answer.startswith("Grace Hopper")


def test_nothing_retrieved_answers_not_found_without_the_llm(server, store, embedding) -> None:
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, top_k=1)
    agent.retriever.search = lambda *args, **kwargs: []  # a search that finds nothing (stands in for no match)
    result = agent.query_result("Who built the first compiler?")
    assert result.answer == agent_prompts.NOT_FOUND and result.sources == []
    assert server.call_count == 0


def test_each_chunk_is_judged_against_every_sub_query_that_found_it(server, store, embedding) -> None:
    server.on("Break the question below", '["Who built the first compiler?", "When was the A-0 system built?"]')
    server.on(JUDGE, "YES")
    server.on(ANSWER, "Grace Hopper [1].")
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1, top_k=2)
    question = "Who built the first compiler and in which year?"
    agent.query_result(question)
    judged = [r.last_user_message for r in server.requests if r.last_user_message.startswith(JUDGE)]
    passages = [prompt.split("Passage:")[-1] for prompt in judged]
    assert len(passages) == len(set(passages)), "each chunk is judged once"
    assert all(f"Question: {question}" in prompt for prompt in judged)
    both = [p for p in judged if "- Who built the first compiler?" in p and "- When was the A-0 system built?" in p]
    assert both, "a chunk both sub-queries found is judged against both"
