"""Per-query state shared by the steps of an agent: usage, events, budget, authorization.

Agents are long-lived (built once by init_config) and may serve many queries at once
(the server), so nothing query-specific lives on the agent itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from deepsearcher.agent.events import EventCallback, StepEvent
from deepsearcher.agent.result import Decision, StepUsage
from deepsearcher.llm.base import BaseLLM
from deepsearcher.llm.structured import structured_call
from deepsearcher.transport.retry import timeout_after
from deepsearcher.types.errors import DeepSearcherError

logger = logging.getLogger("deepsearcher.agent")
T = TypeVar("T")
U = TypeVar("U")


class QueryTimeoutError(DeepSearcherError):
    """A query ran past its overall deadline while a step was still waiting on the LLM."""

    error_kind = "query_timeout"
    http_status = 504

    def __init__(self, timeout: float, step: str) -> None:
        super().__init__(
            f"The query did not finish within its {timeout:g} s deadline: step '{step}' was still waiting for the LLM. "
            "Raise query_settings.timeout (or --timeout / the request's timeout), or check that the LLM server answers."
        )
        self.timeout = timeout
        self.step = step


async def both_at_once(first: Awaitable[T], second: Awaitable[U]) -> tuple[T, U]:
    """Two independent steps (LLM calls) awaited at the same time, failing as if awaited in turn.

    Why not `asyncio.gather`: it leaves the other call running when one fails. Here nothing is
    left running once this returns or raises (a failure or a cancellation of the caller cancels
    and awaits both), and the error raised is the one running them one after another would
    raise: `first`'s when it fails (`second` is then stopped), else `second`'s (when `second`
    fails first, `first` is awaited to learn whether its own error comes before)."""
    tasks = (asyncio.ensure_future(first), asyncio.ensure_future(second))
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        if _failed(tasks[1]):
            await asyncio.wait(tasks[:1])  # in turn, `first` would have run (and maybe failed) before
        return tasks[0].result(), tasks[1].result()  # first's error, else second's, else both values
    finally:
        await _stopped(tasks)


async def all_at_once(steps: Iterable[Awaitable[T]]) -> list[T]:
    """Independent steps (a round's searches or judgements) awaited at the same time, their values
    in order. Unlike `asyncio.gather`, the first failure stops the others (cancelled and awaited:
    no LLM call of a failed query goes on running) before it is raised; so does a cancellation."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    if not tasks:
        return []
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        failed = next((task for task in tasks if _failed(task)), None)
        if failed is not None:
            failed.result()  # raises its error
        return [task.result() for task in tasks]
    finally:
        await _stopped(tasks)


async def _stopped(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel `tasks` and wait until they have stopped, not merely been asked to."""
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:
        _failed(task)  # an error not raised is read here, so asyncio does not log it as lost


def _failed(task: asyncio.Future[Any]) -> bool:
    """Whether `task` ended with an error (reading it marks it as retrieved)."""
    return task.done() and not task.cancelled() and task.exception() is not None


def answer_reserve(timeout: float) -> float:
    """Seconds of a query's deadline kept for writing the answer: research stops before."""
    return min(timeout / 3, 60.0)


class RunContext:
    """Records every LLM call by step, emits step events and enforces the token budget."""

    def __init__(
        self,
        on_event: EventCallback | None = None,
        max_tokens: int | None = None,
        authorized_collections: set[str] | None = None,
        options: dict[str, Any] | None = None,
        timeout: float | None = None,
        store_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.options = options or {}
        #: the per-call options the caller itself gave (a user's `retrieve` override gets only these)
        self.given_options: dict[str, Any] = {}
        #: keywords every vector-store search of this query gets (DeepSearcher's `tenant_id`)
        self.store_kwargs: dict[str, Any] = dict(store_kwargs or {})
        self.extra: dict[str, Any] = {}
        #: the question with its bridge phrases replaced by their answers (agent/bridge.py), when an
        #: agent resolved any: what the concise answer is extracted for
        self.rewritten_question: str | None = None
        #: each bridge hop asked and the answer it got, used or not (agent/bridge.py): an answer to a
        #: part of the question, which the concise answer must not be given back as
        self.hop_answers: list[tuple[str, str]] = []
        #: an answer decided in code from answers to the question's parts (agent/both.py): it stands
        #: like a computed comparison, over what the model wrote
        self.decided: Decision | None = None
        self.on_event = on_event
        self.max_tokens = max_tokens
        self.authorized_collections = authorized_collections
        #: collections known to be loaded and permitted for this query (None: not checked yet)
        self.searchable: list[str] | None = None
        self.usage_by_step: dict[str, StepUsage] = defaultdict(StepUsage)
        self.steps: list[StepEvent] = []
        self.started = time.perf_counter()
        self.stopped_by_budget = False
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout if timeout else None
        self.stopped_by_deadline = False

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
        """True (once announced) when the query has used its `max_tokens` budget, or so much
        of its time that only the answer's reserve is left: the agent then answers from what it found."""
        if self.deadline_near():
            return True
        if self.max_tokens is None or self.total_tokens < self.max_tokens:
            return False
        if not self.stopped_by_budget:
            self.stopped_by_budget = True
            self.emit("budget_stop", used_tokens=self.total_tokens, max_tokens=self.max_tokens)
        return True

    # deadline -----------------------------------------------------------------
    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def deadline_near(self) -> bool:
        """True (once announced) when less than the answer's reserve is left of the deadline."""
        left = self.time_left()
        if left is None or self.timeout is None or left > answer_reserve(self.timeout):
            return False
        if not self.stopped_by_deadline:
            self.stopped_by_deadline = True
            self.emit("deadline_stop", elapsed=round(self.elapsed(), 2), timeout=self.timeout)
        return True

    async def bounded(self, call: Awaitable[T], step: str) -> T:
        """`call`, cancelled with QueryTimeoutError when the query's deadline passes."""
        left = self.time_left()
        if left is None:
            return await call
        try:
            async with timeout_after(max(0.001, left)):
                return await call
        except (asyncio.TimeoutError, TimeoutError):
            raise QueryTimeoutError(self.timeout or 0.0, step) from None

    # LLM calls ----------------------------------------------------------------
    async def chat(self, llm: BaseLLM, messages: list[dict[str, str]], step: str, max_tokens: int | None = None) -> str:
        """One reply; `max_tokens` caps a reply that must be short (None: the LLM's own setting)."""
        call = llm.achat(messages, max_tokens=max_tokens) if max_tokens else llm.achat(messages)
        response = await self.bounded(call, step)
        self.record(step, response.usage)
        return llm.remove_think(response.content)

    async def structured(
        self,
        llm: BaseLLM,
        prompt: str,
        parser: Callable[[str], Any],
        step: str,
        json_mode: bool = False,
    ) -> Any:
        """One prompt → parsed value (lists, numbers, yes/no), with the parser's repair retry.

        List steps pass json_mode=True: providers with a JSON mode then return an object
        wrapping the list, which the list parser unwraps; the others ignore it.
        """
        call = structured_call(
            llm,
            [{"role": "user", "content": prompt}],
            parser,
            step=step,
            json_mode=json_mode,
        )
        value, usage = await self.bounded(call, step)
        self.record(step, usage)
        return value

    async def stream_answer(self, llm: BaseLLM, prompt: str, step: str = "answer") -> str:
        """Stream the final answer token by token as events; returns the whole text."""
        parts: list[str] = []
        stream = llm.astream([{"role": "user", "content": prompt}])

        async def consume() -> None:
            async with stream:
                async for token in stream:
                    parts.append(token)
                    self.emit("answer_token", token=token)

        await self.bounded(consume(), step)
        self.record(step, stream.usage)
        return llm.remove_think("".join(parts))

    def elapsed(self) -> float:
        return time.perf_counter() - self.started
