"""`deepsearcher mcp` spoken to by the official MCP client over stdio: a real subprocess,
real embedding model and Milvus Lite store, the agents against the scripted LLM server."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import make_docs
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="NO")
ANSWER = "Answer the question using only the numbered sources"


def write_config(path: Path, milvus_uri: str, roots: list[Path], llm: dict[str, Any] | None) -> Path:
    settings: dict[str, Any] = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}}},
        "server": {"allowed_roots": [str(root) for root in roots]},
    }
    if llm is not None:
        settings["provide_settings"]["llm"] = llm
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


@asynccontextmanager
async def mcp_session(config: Path, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    environment = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    environment.update({"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "deepsearcher.cli.main", "mcp", "--config", str(config)],
        env=environment,
        cwd=str(config.parent),
    )
    with open(config.parent / "mcp-stderr.log", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", False))


def payload(result: Any) -> Any:
    """The tool's JSON result, read from its text content (the same in SDK 1.x and 2.x)."""
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    assert not is_error(result), text
    return json.loads(text)


def error_text(result: Any) -> str:
    assert is_error(result), result
    return " ".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def cite_hopper(request) -> str:
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    return f"Grace Hopper built the first compiler [{match.group(1)}]." if match else "Not found."


async def test_tools_over_stdio(server, tmp_path: Path, milvus_uri: str) -> None:
    allowed = tmp_path / "allowed"
    docs = make_docs(allowed / "docs")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("The vault code is 1234.", encoding="utf-8")
    config = write_config(tmp_path / "config.yaml", milvus_uri, [allowed], server.llm_config(retry_base_delay=0.01))
    server.on(ANSWER, cite_hopper)

    async with mcp_session(config) as session:
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        assert names == {"search", "deep_search", "list_collections", "load"}
        load_tool = next(tool for tool in listed.tools if tool.name == "load")
        schema = getattr(load_tool, "input_schema", None) or load_tool.inputSchema
        assert "inputs" in schema["properties"] and schema["required"] == ["inputs"]

        assert payload(await session.call_tool("list_collections", {}))["collections"] == []

        loaded = payload(
            await session.call_tool(
                "load", {"inputs": [str(docs)], "collection": "science", "description": "Computing history"}
            )
        )
        assert loaded["ok"] and len(loaded["loaded"]) == 3 and loaded["chunks_inserted"] >= 4 and loaded["failed"] == []

        again = payload(await session.call_tool("load", {"inputs": [str(docs)], "collection": "science"}))
        assert again["loaded"] == [] and len(again["skipped_unchanged"]) == 3

        collections = payload(await session.call_tool("list_collections", {}))["collections"]
        assert collections == [
            {
                "name": "science",
                "description": "Computing history",
                "dim": 384,
                "embedding_model": collections[0]["embedding_model"],
                "sources": 3,
            }
        ]

        found = payload(
            await session.call_tool(
                "search", {"query": "Who built the first compiler?", "collection": "science", "top_k": 2}
            )
        )
        assert len(found["results"]) == 2
        top = found["results"][0]
        assert (
            "Grace Hopper" in top["text"]
            and top["title"] == "Grace Hopper"
            and top["reference"].endswith("records.jsonl")
        )
        assert isinstance(top["score"], float)

        # Outside the allowed roots, directly or through a symlink; `..`; relative; not http(s): refused.
        (allowed / "link").symlink_to(outside)
        for path in (outside / "secret.txt", allowed / "link"):
            message = error_text(await session.call_tool("load", {"inputs": [str(path)], "collection": "science"}))
            assert "outside the allowed roots" in message
        for path, reason in ((f"{allowed}/../outside", "'..'"), ("docs", "relative"), ("file:///etc/passwd", "http")):
            assert reason in error_text(await session.call_tool("load", {"inputs": [path], "collection": "science"}))
        # A link inside an allowed folder that leads out of the roots is not read either.
        (docs / "escape.txt").symlink_to(outside / "secret.txt")
        escaped = payload(await session.call_tool("load", {"inputs": [str(docs)], "collection": "science"}))
        assert not escaped["ok"] and [f["source"] for f in escaped["failed"]] == [str(docs / "escape.txt")]
        assert payload(await session.call_tool("list_collections", {}))["collections"][0]["sources"] == 3
        found = payload(
            await session.call_tool("search", {"query": "vault code", "collection": "science", "top_k": 10})
        )
        assert all("1234" not in r["text"] for r in found["results"])

        assert "Collection 'nope' does not exist" in error_text(
            await session.call_tool("search", {"query": "x", "collection": "nope"})
        )

        answer = payload(
            await session.call_tool(
                "deep_search",
                {"question": "Who built the first compiler?", "agent": "naive", "collections": ["science"]},
            )
        )
        assert answer["answer"].startswith("Grace Hopper built the first compiler [")
        assert answer["agent"] == "NaiveRAG"
        cited = [source for source in answer["sources"] if source["cited"]]
        assert len(cited) == 1 and cited[0]["title"] == "Grace Hopper" and "A-0" in cited[0]["text"]
        assert answer["usage"]["calls"] == 2 and answer["usage"]["total_tokens"] > 0  # extraction, answer
        assert server.call_count == 2

        # the tool's schema lists the registered agents, so the SDK refuses others before the tool runs
        refused = error_text(await session.call_tool("deep_search", {"question": "x", "agent": "wizard"}))
        assert "wizard" in refused and "'deep'" in refused and "'naive'" in refused


async def test_deep_search_without_an_llm_is_a_clear_tool_error(tmp_path: Path, milvus_uri: str) -> None:
    config = write_config(tmp_path / "config.yaml", milvus_uri, [], llm=None)  # OpenAI without a key
    async with mcp_session(config) as session:
        message = error_text(await session.call_tool("deep_search", {"question": "Who built the first compiler?"}))
        assert "No LLM is configured" in message and "OPENAI_API_KEY" in message
        # No allowed roots: local paths are refused, retrieval still works.
        assert "disabled" in error_text(await session.call_tool("load", {"inputs": [str(tmp_path)]}))
        assert payload(await session.call_tool("list_collections", {}))["collections"] == []


def test_path_check_without_the_server_extra_keeps_the_same_rules(tmp_path: Path) -> None:
    """The load service's path check (deepsearcher.app.path_rules, MCP's and the REST API's), which needs no FastAPI."""
    from deepsearcher.app.path_rules import resolve_allowed as check_path
    from deepsearcher.types.errors import DeepSearcherError

    root = (tmp_path / "root").resolve()
    (root / "docs").mkdir(parents=True)
    (root / "escape").symlink_to(tmp_path)
    assert check_path(str(root / "docs"), [root]) == root / "docs"
    assert check_path(str(root), [root]) == root
    refused = [
        (str(root / "docs"), [], "disabled"),
        (str(root / "escape"), [root], "outside the allowed roots"),
        (f"{root}/docs/../../x", [root], "'..'"),
        ("docs", [root], "relative"),
        ("", [root], "empty"),
    ]
    for given, roots, reason in refused:
        with pytest.raises(DeepSearcherError, match=reason):
            check_path(given, roots)
