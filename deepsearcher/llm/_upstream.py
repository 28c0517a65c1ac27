"""Chat models written against upstream DeepSearcher's base: adapted here, not in the core.

Upstream's `BaseLLM` asked for one synchronous `chat(messages) -> ChatResponse`, had an empty
`__init__` (so its users' subclasses often never call it) and parsed lists with the model's own
`literal_eval`. Upstream's users also replace `llm.chat` on an instance (a test's mock, a
logging wrapper). Ours asks a provider for the async `_achat_once`; this module fits the rest:

- a class with `chat` but no `_achat_once` gets an `_achat_once` that runs its `chat` in a
  worker thread (the event loop never blocks on it) and a `__new__` that gives every instance
  the shared state before its own `__init__`;
- a `chat` set on an instance serves every call, async and streamed ones included, with the
  `messages=` keyword; a wrapper calling the original then reaches the provider, not itself;
- a `literal_eval` of the user's (on the class or the instance) reads a reply our parser
  could not, before the repair retry.

Attached once, by `deepsearcher/llm/__init__.py`; nothing else imports it.
"""

from __future__ import annotations

import contextvars
import functools
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from deepsearcher.utils.contracts import attach_shape

if TYPE_CHECKING:
    from deepsearcher.llm.base import BaseLLM, ChatResponse

T = TypeVar("T")
OnceCall = Callable[..., Awaitable["ChatResponse"]]

#: Set while an instance's own `chat` runs, so that a wrapper calling the original does not loop.
_IN_OWN_CHAT: contextvars.ContextVar[bool] = contextvars.ContextVar("deepsearcher_in_own_chat", default=False)


class UpstreamLLMShape:
    """The `LLMShape` of a chat model written for upstream DeepSearcher."""

    def adapt(self, cls: type[BaseLLM]) -> None:
        from deepsearcher.llm.base import BaseLLM

        if cls._achat_once is BaseLLM._achat_once and cls.chat is not BaseLLM.chat:
            cls._achat_once = _chat_in_thread  # type: ignore[method-assign]
            cls.__new__ = _new_with_shared_state  # type: ignore[method-assign,assignment]

    def routed_call(self, llm: BaseLLM) -> OnceCall | None:
        """A `chat` set on this very instance (a test's mock, a user's wrapper), unless it is
        running now (its call of the original takes the provider's path)."""
        if _IN_OWN_CHAT.get() or "chat" not in llm.__dict__:
            return None
        return functools.partial(_chat_in_thread, llm, own=llm.__dict__["chat"])

    def widen_parser(self, llm: BaseLLM, parser: Callable[[str], T]) -> Callable[[str], T]:
        """`parser`, then the user's own `literal_eval` where ours could not read the reply."""
        from deepsearcher.llm.base import BaseLLM

        own = llm.__dict__.get("literal_eval") or getattr(type(llm), "literal_eval", None)
        if own is None or own is BaseLLM.literal_eval:
            return parser

        def parse(text: str) -> T:
            try:
                return parser(text)
            except Exception as ours:
                try:
                    value = own(text)
                except Exception:  # noqa: BLE001 - theirs failed too: our parser's error is the one to report
                    raise ours from None
                return parser(json.dumps(value))  # what theirs read, in the form ours reads

        return parse


async def _chat_in_thread(
    self: BaseLLM, messages: list[dict[str, Any]], *, own: Callable[..., object] | None = None, **kwargs: object
) -> ChatResponse:
    """One request through a synchronous `chat` (the class's, or `own` set on the instance), in a
    worker thread. It takes only the messages, so per-call options are not passed."""
    import asyncio

    from deepsearcher.llm.base import ChatResponse

    chat = own or functools.partial(type(self).chat, self)

    def call() -> object:
        token = _IN_OWN_CHAT.set(own is not None)
        try:
            return chat(messages=messages)  # DeepSearcher's agents pass messages=
        finally:
            _IN_OWN_CHAT.reset(token)

    reply = await asyncio.to_thread(call)
    if isinstance(reply, str):  # some user classes return the bare text
        reply = ChatResponse(reply)
    elif not isinstance(reply, ChatResponse) and hasattr(reply, "content"):  # their own ChatResponse class
        reply = ChatResponse(str(reply.content or ""), int(getattr(reply, "total_tokens", 0) or 0))
    if not isinstance(reply, ChatResponse):
        raise TypeError(f"{type(self).__name__}.chat returned {type(reply).__name__}; it must return a ChatResponse")
    return reply


def _new_with_shared_state(cls: type[BaseLLM], *args: object, **kwargs: object) -> BaseLLM:
    """Give every instance the shared state before `__init__`, so a subclass whose `__init__`
    skips `super().__init__()` still has limits, counters and a model name."""
    from deepsearcher.llm.base import BaseLLM

    self = object.__new__(cls)
    BaseLLM.__init__(self, getattr(cls, "model", "") or "")
    return self


attach_shape("llm", UpstreamLLMShape())
