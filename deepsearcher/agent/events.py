"""Step events an agent emits while it works (route chosen, searches, answer tokens...), and the
one place that says how each reads to a person.

`describe(event)` is what the CLI prints as a line and what every step carries to the web page
(`view` in its JSON), so the two never word a step differently, and an agent's new kind of
step shows on both without an edit to either (as its name and data, until it is given words).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

__all__ = ["EVENT_KINDS", "EventCallback", "EventKind", "StepEvent", "StepView", "describe"]


class EventKind(str, Enum):
    """Kinds of events, in the order a DeepSearch run usually emits them."""

    ROUTE = "route"  # the RAGRouter chose an agent
    COLLECTIONS = "collections"  # the CollectionRouter chose collections
    WEB_SEARCH = "web_search"  # one query sent to the web search API (or why the web part failed)
    WEB_FETCH = "web_fetch"  # the result pages fetched into the web cache (or reused from it)
    SUB_QUERIES = "sub_queries"  # the question was decomposed
    SEARCH = "search"  # one query searched, with how many chunks were accepted
    JUDGE = "judge"  # relevance judgements of one iteration finished
    REFLECTION = "reflection"  # gap queries (or stop) decided
    FALLBACK = "fallback"  # the LLM kept no retrieved chunk: the best-scored ones are used
    INTERMEDIATE_ANSWER = "intermediate_answer"  # ChainOfRAG: one hop answered
    EARLY_STOPPING = "early_stopping"  # ChainOfRAG: the facts found answer the question
    BUDGET_STOP = "budget_stop"  # the token budget ended the search early
    DEADLINE_STOP = "deadline_stop"  # the query's deadline ended the search early
    ANSWER_TOKEN = "answer_token"  # one streamed token of the final answer
    ANSWER = "answer"  # the final answer is complete

    def __str__(self) -> str:
        return self.value


EVENT_KINDS = tuple(kind.value for kind in EventKind)


@dataclass(frozen=True)
class StepView:
    """A step as a person reads it: a short label, a sentence, what it quotes, the items it lists."""

    label: str
    text: str
    quote: str | None = None
    items: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for a terminal: 'search: "first compiler" in science: 3 found, 1 kept'."""
        words = [f"{self.label.lower()}:"] + ([f'"{self.quote}"'] if self.quote else []) + [self.text]
        listed = ": " + "; ".join(self.items) if self.items else ""
        return " ".join(word for word in words if word) + listed

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "items": list(self.items)}


@dataclass
class StepEvent:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "at": self.at, **self.data, "view": describe(self).to_dict()}


EventCallback = Callable[[StepEvent], None]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _names(values: Sequence[str] | None, empty: str) -> str:
    return ", ".join(values) if values else empty


def _routed(data: dict[str, Any]) -> str:
    if data.get("fallback") == "router_picked_none":
        return " (the router picked none: searching every permitted collection)"
    if data.get("reason"):
        return f" ({data['reason']})"
    return " (chosen by the router)" if data.get("routed") else ""


def _search(data: dict[str, Any]) -> StepView:
    where = f"in {_names(data.get('collections'), '')}: " if data.get("collections") else ""
    text = f"{where}{data.get('retrieved', 0)} found, {data.get('accepted', 0)} kept"
    return StepView("Search", text, quote=str(data.get("query", "")))


def _judge(data: dict[str, Any]) -> StepView:
    unclear = f", {data['unparseable']} unclear" if data.get("unparseable") else ""
    unclear += f", {data['kept_first']} kept as a search's first hit" if data.get("kept_first") else ""
    text = f"{_plural(int(data.get('judged', 0)), 'passage')} read, {data.get('accepted', 0)} relevant{unclear}"
    return StepView("Judged", text)


def _trimmed(data: dict[str, Any]) -> StepView:
    kept, dropped = int(data.get("kept", 0)), int(data.get("dropped", 0))
    shortened = ", the last one shortened" if data.get("cut") else ""
    return StepView(
        "Fitted to the model",
        f"the answer is written from the best {kept} of {_plural(kept + dropped, 'passage')}{shortened}: "
        "the others do not fit in the model's context window",
    )


def _reflection(data: dict[str, Any]) -> StepView:
    queries = tuple(data.get("queries") or ())
    if data.get("unmentioned"):
        return StepView("Reflection", "no kept passage mentions yet, searching", items=queries)
    return StepView("Reflection", "searching further for" if queries else "enough found, stopping", items=queries)


def _web_search(data: dict[str, Any]) -> StepView:
    provider = f" ({data['provider']})" if data.get("provider") else ""
    if data.get("error"):
        return StepView("Web search", str(data["error"]), quote=data.get("query") or None)
    return StepView(
        "Web search", f"sent{provider}: {_plural(int(data.get('results', 0)), 'result')}", quote=data.get("query")
    )


def _web_fetch(data: dict[str, Any]) -> StepView:
    failed = data.get("failed") or {}
    text = f"{_plural(int(data.get('fetched', 0)), 'page')} fetched, {data.get('reused', 0)} reused from the cache"
    return StepView("Web pages", f"{text}, {len(failed)} failed" if failed else text, items=tuple(failed))


_VIEWS: dict[str, Callable[[dict[str, Any]], StepView]] = {
    EventKind.WEB_SEARCH: _web_search,
    EventKind.WEB_FETCH: _web_fetch,
    EventKind.ROUTE: lambda d: StepView("Agent", f"{d.get('agent', '?')}{_routed(d)}"),
    EventKind.COLLECTIONS: lambda d: StepView("Collections", _names(d.get("collections"), "none found") + _routed(d)),
    EventKind.SUB_QUERIES: lambda d: StepView(
        "Sub-questions",
        f"{_plural(len(d.get('queries') or ()), 'question')} to research",
        items=tuple(d.get("queries") or ()),
    ),
    EventKind.SEARCH: _search,
    EventKind.JUDGE: _judge,
    EventKind.REFLECTION: _reflection,
    EventKind.INTERMEDIATE_ANSWER: lambda d: StepView(
        "Hop answer", f"→ {d.get('answer', '')}", quote=str(d.get("query", ""))
    ),
    EventKind.FALLBACK: lambda d: StepView(
        "No passage judged relevant",
        f"answering from the {d.get('kept', 0)} of {_plural(int(d.get('retrieved', 0)), 'passage')} found "
        "that matched the search best",
    ),
    "context_trimmed": _trimmed,
    EventKind.EARLY_STOPPING: lambda d: StepView("Early stop", "the facts found answer the question"),
    EventKind.BUDGET_STOP: lambda d: StepView(
        "Budget",
        f"token budget reached ({d.get('used_tokens')} ≥ {d.get('max_tokens')}): answering from what was found",
    ),
    EventKind.DEADLINE_STOP: lambda d: StepView(
        "Deadline",
        f"deadline near ({d.get('elapsed', 0):g} s of {d.get('timeout', 0):g} s): answering from what was found",
    ),
    EventKind.ANSWER: lambda d: StepView(
        "Answer",
        f"written from {_plural(int(d.get('sources', 0)), 'source')}"
        if d.get("llm", True)
        else "nothing found to answer from (the LLM was not asked)",
    ),
}


def describe(event: StepEvent) -> StepView:
    """How `event` reads; a kind without words here shows as its name and its data."""
    view = _VIEWS.get(str(event.kind))
    if view is not None:
        return view(event.data)
    label = str(event.kind).replace("_", " ").capitalize()
    shown = [f"{key}={value}" for key, value in event.data.items() if not isinstance(value, (list, dict))]
    return StepView(label, ", ".join(shown))
