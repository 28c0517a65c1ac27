"""The tolerant parsers and the one-repair structured call (against the scripted server)."""

from __future__ import annotations

import pytest

from deepsearcher.llm.base import BaseLLM, Usage
from deepsearcher.llm.errors import LLMOutputError
from deepsearcher.llm.parsing import (
    literal_eval,
    parse_json,
    parse_list,
    parse_number,
    parse_yes_no,
    remove_think,
    strip_code_fences,
)
from deepsearcher.llm.structured import StructuredResult, structured_call
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server")


# --------------------------------------------------------------------------- remove_think


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>let me reason</think>The answer", "The answer"),
        ("<think>\nmulti\nline\n</think>\n\n  Answer  ", "Answer"),
        ("<THINK>shouting</THINK>ok", "ok"),
        ("<think>cut off while reasoning, never closed", ""),
        ("reasoning whose opening tag the server removed</think>final", "final"),
        ("<think>a</think>x<think>b</think>y", "xy"),
        ("no tags at all", "no tags at all"),
        ("", ""),
    ],
)
def test_remove_think(text, expected):
    assert remove_think(text) == expected
    assert BaseLLM.remove_think(text) == expected


def test_strip_code_fences():
    assert strip_code_fences("```json\n[1]\n```") == "[1]"
    assert strip_code_fences("```\nplain\n```") == "plain"
    assert strip_code_fences("```python\n['a']") == "['a']"  # unclosed fence
    assert strip_code_fences("no fence") == "no fence"


# --------------------------------------------------------------------------- lists


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["a", "b"]', ["a", "b"]),
        ('<think>maybe ["x"]</think>["a", "b"]', ["a", "b"]),
        ('```json\n["a", "b"]\n```', ["a", "b"]),
        ("```python\n['a', 'b']\n```", ["a", "b"]),
        ('Here are the sub-queries:\n["a", "b"]\nI hope this helps!', ["a", "b"]),
        ("['a', 'b']", ["a", "b"]),
        ('["a", "b",]', ["a", "b"]),
        ('["a",\n "b",\n]', ["a", "b"]),
        ('["a", "b", "c is cut o', ["a", "b"]),
        ('["a", "b",', ["a", "b"]),
        ('```json\n["a", "b"', ["a", "b"]),
        ('{"queries": ["a", "b"]}', ["a", "b"]),
        ('{"queries": ["a", "b"', ["a", "b"]),
        ('Based on [1] and [2], I suggest: ["What is X?", "Who\'s Y?"]', ["What is X?", "Who's Y?"]),
        ("- first\n- second", ["first", "second"]),
        ("1. first\n2) second", ["first", "second"]),
        ("[]", []),
        ("```\n[]\n```", []),
        ("[1, 2]", ["1", "2"]),
        ('[["nested", "list"]]', ["nested", "list"]),
        ('[true, "x", null]', ["True", "x"]),
    ],
)
def test_parse_list(text, expected):
    assert parse_list(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I cannot help with that.", "no list found"),
        ("", "no list found"),
        ('["only one item that was cut', "cut off before its first item"),
        ('<think>reasoning that never ended ["a"]', "no list found"),
    ],
)
def test_parse_list_failures_name_the_step(text, reason):
    with pytest.raises(LLMOutputError) as info:
        parse_list(text, step="sub-queries")
    assert info.value.step == "sub-queries"
    assert "'sub-queries'" in str(info.value) and reason in str(info.value)


def test_error_shows_the_start_of_the_output():
    bad = "Sorry, " + "blah " * 200
    with pytest.raises(LLMOutputError) as info:
        parse_list(bad, step="reflect")
    message = str(info.value)
    assert "Sorry, blah" in message and len(message) < 400 and info.value.text == bad


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2", 2),
        ("10", 10),
        (" 123 \n", 123),
        ("[2]", 2),
        ("The best agent is [2] because agent 1 lacks data and 3 is slow.", 2),
        ("I considered [1] and [3]; final: [3]", 3),
        ("The answer is **4**, since 2 fails.", 4),
        ("I pick option 12.", 12),
        ("Between 1 and 7, it is 7", 7),
        ("<think>maybe 3 or 5</think>1", 1),
        ("```\n4\n```", 4),
        ('{"index": 5}', 5),
        ("-1", -1),
    ],
)
def test_parse_number(text, expected):
    assert parse_number(text) == expected


def test_parse_number_failure():
    with pytest.raises(LLMOutputError, match="'route'.*no number"):
        parse_number("none of them", step="route")


# --------------------------------------------------------------------------- yes / no


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("YES", True),
        ("NO", False),
        ("yes.", True),
        ('"No"', False),
        ("`YES`", True),
        ("<think>no, no, wait</think>YES", True),
        ("The chunk mentions no dates, so the answer is YES.", True),
        ("Answer: no", False),
        ("I think it is relevant. Yes", True),
        ('{"relevant": true}', True),
        ('{"answer": "no"}', False),
        ("```\nNO\n```", False),
        ("true", True),
        ("False", False),
    ],
)
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) is expected


def test_parse_yes_no_failure():
    with pytest.raises(LLMOutputError, match="'relevance'.*YES or NO"):
        parse_yes_no("It depends.", step="relevance")


# --------------------------------------------------------------------------- JSON


def test_parse_json_and_literal_eval():
    assert parse_json('Result: {"a": [1, 2,], "b": true, "c": null}') == {"a": [1, 2], "b": True, "c": None}
    assert literal_eval("```python\n{'k': 'v'}\n```") == {"k": "v"}
    assert BaseLLM.literal_eval("['x', 'y']") == ["x", "y"]
    with pytest.raises(LLMOutputError, match="literal_eval"):
        literal_eval("no structure")


# --------------------------------------------------------------------------- structured_call


def _usage_of_request(request, reply: str) -> Usage:
    prompt = len(request.prompt_text.split())
    completion = len(reply.split())
    return Usage(prompt, completion, prompt + completion)


async def test_structured_call_parses_first_reply(server):
    server.queue('```json\n["q1", "q2"]\n```')
    llm = server.llm()
    result = await structured_call(llm, [{"role": "user", "content": "Give queries"}], parse_list, "sub-queries")
    assert isinstance(result, StructuredResult)
    value, usage = result
    assert value == ["q1", "q2"] and result.value == value
    assert usage == _usage_of_request(server.requests[0], '```json\n["q1", "q2"]\n```')
    assert llm.calls == 1


async def test_structured_call_repairs_once(server):
    bad = "Sure! The queries would be about cats and dogs."
    server.queue(bad, '["cats", "dogs"]')
    llm = server.llm()
    value, usage = await structured_call(llm, [{"role": "user", "content": "Give queries"}], parse_list, "sub-queries")
    assert value == ["cats", "dogs"]
    assert llm.calls == 2 and server.call_count == 2
    repair = server.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": bad}
    assert repair[-1]["role"] == "user" and "JSON list of strings" in repair[-1]["content"]
    expected = _usage_of_request(server.requests[0], bad) + _usage_of_request(server.requests[1], '["cats", "dogs"]')
    assert usage == expected and usage.total_tokens == llm.usage_total.total_tokens


async def test_structured_call_fails_after_one_repair(server):
    server.queue("I like turtles.", "Still no list, sorry.")
    llm = server.llm()
    with pytest.raises(LLMOutputError) as info:
        await structured_call(llm, [{"role": "user", "content": "Give queries"}], parse_list, "reflection")
    assert info.value.step == "reflection"
    assert "'reflection'" in str(info.value) and "Still no list" in str(info.value)
    assert "repair" in str(info.value)
    assert server.call_count == 2  # exactly one repair
    assert info.value.usage.total_tokens == llm.usage_total.total_tokens


async def test_structured_call_json_mode_and_custom_parser(server):
    server.queue('{"queries": ["a"]}')
    llm = server.llm()
    value, _ = await structured_call(
        llm, [{"role": "user", "content": "queries please"}], parse_list, "q", json_mode=True
    )
    assert value == ["a"]
    request = server.requests[-1]
    assert request.json_mode is True
    assert any("json" in m["content"].lower() for m in request.messages)  # JSON mode needs the word

    server.queue("size: big", "size: 42")

    def parse_size(text: str) -> int:
        return int(text.split(":")[1])

    value, _ = await structured_call(
        llm, [{"role": "user", "content": "size?"}], parse_size, "size", format_hint="'size: <integer>'"
    )
    assert value == 42
    assert "'size: <integer>'" in server.requests[-1].messages[-1]["content"]


async def test_structured_call_number_and_yes_no(server):
    server.queue("<think>1 or 2?</think>The best agent is [2] because it has data.", "Well... YES")
    llm = server.llm()
    assert (await structured_call(llm, [{"role": "user", "content": "pick"}], parse_number, "route")).value == 2
    assert (
        await structured_call(llm, [{"role": "user", "content": "relevant?"}], parse_yes_no, "rerank")
    ).value is True
    assert server.call_count == 2
