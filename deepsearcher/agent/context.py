"""Per-query state shared by the steps of an agent: usage, events, budget, authorization.

Agents are long-lived (built once by init_config) and may serve many queries at once
(the server), so nothing query-specific lives on the agent itself.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import Any, Callable

from deepsearcher.agent.events import EventCallback, StepEvent
from deepsearcher.agent.result import StepUsage
from deepsearcher.llm.parsing import structured_call

logger = logging.getLogger("deepsearcher.agent")


class RunContext:
    """Records every LLM call by step, emits step events and enforces the token budget."""

    def __init__(
        self,
        on_event: EventCallback | None = None,
        max_tokens: int | None = None,
        authorized_collections: set[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.options = options or {}
        self.extra: dict[str, Any] = {}
        self.on_event = on_event
        self.max_tokens = max_tokens
        self.authorized_collections = authorized_collections
        self.usage_by_step: dict[str, StepUsage] = defaultdict(StepUsage)
        self.steps: list[StepEvent] = []
        self.started = time.perf_counter()
        self.stopped_by_budget = False

    def option(self, name: str, default: Any) -> Any:
        """A per-call option (max_iter, top_k...) or the agent's default."""
        return self.options.get(name, default)

    # events -----------------------------------------------------------------
    def emit(self, kind: str, **data: Any) -> None:
        event = StepEvent(kind, data)
        if kind != "answer_token":
            self.steps.append(event)
            logger.info("%s %s", kind, data)
        if self.on_event is not None:
            self.on_event(event)

    # usage and budget ---------------------------------------------------------
    def record(self, step: str, usage: Any) -> None:
        """Add one call's usage (an llm Usage object) to `step`."""
        self.usage_by_step[step].add(
            getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0,
            getattr(usage, "total_tokens", None),
        )

    @property
    def total_tokens(self) -> int:
        return sum(usage.total_tokens for usage in self.usage_by_step.values())

    def budget_exhausted(self) -> bool:
        """True (once announced) when the query has used its `max_tokens` budget."""
        if self.max_tokens is None or self.total_tokens < self.max_tokens:
            return False
        if not self.stopped_by_budget:
            self.stopped_by_budget = True
            self.emit("budget_stop", used_tokens=self.total_tokens, max_tokens=self.max_tokens)
        return True

    # LLM calls ----------------------------------------------------------------
    async def chat(self, llm: Any, messages: list[dict[str, str]], step: str) -> str:
        response = await llm.achat(messages)
        self.record(step, response.usage)
        return llm.remove_think(response.content)

    async def structured(self, llm: Any, prompt: str, parser: Callable[[str], Any], step: str, json_mode: bool = False) -> Any:
        """One prompt → parsed value (lists, numbers, yes/no), with the parser's repair retry.

        List steps pass json_mode=True: providers with a JSON mode then return an object
        wrapping the list, which the list parser unwraps; the others ignore it.
        """
        value, usage = await structured_call(llm, [{"role": "user", "content": prompt}], parser, step=step, json_mode=json_mode)
        self.record(step, usage)
        return value

    async def stream_answer(self, llm: Any, prompt: str, step: str = "answer") -> str:
        """Stream the final answer token by token as events; returns the whole text."""
        parts: list[str] = []
        stream = llm.astream([{"role": "user", "content": prompt}])
        async for token in stream:
            parts.append(token)
            self.emit("answer_token", token=token)
        self.record(step, stream.usage)
        return llm.remove_think("".join(parts))

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

