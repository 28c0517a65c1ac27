"""Read ahead: the next sources are listed, hashed, parsed and split while the current ones embed.

On a real folder the stages cost different things: parsing a PDF or an HTML page is
single-threaded Python (in the parse worker process), embedding is ONNX Runtime, which
releases the GIL. Run one after the other, each file's parse is time the model stands idle
(issue 18 measured the pipeline at 0.81 of the model's raw limit on such a folder). Here one
producer thread walks the sources and prepares each one while the caller embeds what came
before, so the slower stage alone sets the pace.

The read-ahead is bounded by *weight* (chunks), not by count of sources: the caller
embeds a whole batch at a time, so the producer must be able to prepare about a batch's
worth of chunks meanwhile, whether that is one large PDF or hundreds of small files.

The producer runs in a copy of the caller's context (the per-file parse budget is a
context variable), its exceptions are raised in the caller, in order, and closing stops it
at the next source: nothing waits forever on a consumer that went away.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: Seconds `close` waits for the producer to finish the source in hand before leaving it
#: (a daemon thread) behind; a parse stuck past that is ended by the parser's own budget.
CLOSE_TIMEOUT = 10.0


class _Failed:
    """An exception raised by the producer, carried to the consumer in order."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


class ReadAhead(Generic[T, R]):
    """Iterate `prepare(item)` for each item of `items`, computed up to `max_weight` ahead in a thread.

    `weight(result)` says how much of the budget a prepared result holds (its chunks); at
    least one result is always allowed in, so a result heavier than the whole budget passes.
    """

    def __init__(
        self,
        items: Iterable[T],
        prepare: Callable[[T], R],
        weight: Callable[[R], int],
        max_weight: int,
        interrupt: Callable[[], None] | None = None,
        name: str = "deepsearcher-read-ahead",
    ) -> None:
        """`interrupt` is called when the reader is closed while still preparing a source (the
        consumer failed or was stopped): it should end the work in hand, e.g. stop the parser."""
        self._items = items
        self._interrupt = interrupt
        self._prepare = prepare
        self._weight = weight
        self._max_weight = max(1, max_weight)
        self._ready: deque[tuple[object, int]] = deque()
        self._held = 0
        self._stopped = False
        self._condition = threading.Condition()
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._produce,), name=name, daemon=True)
        self._thread.start()

    def _produce(self) -> None:
        try:
            for item in self._items:
                if self._stopped:
                    break
                result = self._prepare(item)
                if not self._put(result, max(0, self._weight(result))):
                    break
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, who raises it
            self._put(_Failed(exc), 0)
        finally:
            try:
                close = getattr(self._items, "close", None)
                if callable(close):  # a generator is closed by the thread that ran it
                    close()
            finally:
                self._put(_END, 0)

    def _put(self, value: object, weight: int) -> bool:
        """Queue `value` once its weight fits (or nothing else is queued); False once closed."""
        with self._condition:
            while not self._stopped and self._ready and self._held + weight > self._max_weight:
                self._condition.wait()
            if self._stopped:
                return False
            self._ready.append((value, weight))
            self._held += weight
            self._condition.notify_all()
            return True

    def __iter__(self) -> Iterator[R]:
        while True:
            with self._condition:
                while not self._ready:
                    self._condition.wait()
                value, weight = self._ready.popleft()
                self._held -= weight
                self._condition.notify_all()
            if value is _END:
                return
            if isinstance(value, _Failed):
                raise value.error
            yield value  # type: ignore[misc]

    def close(self) -> None:
        """Stop reading ahead: the source in hand is interrupted, and waited for at most CLOSE_TIMEOUT."""
        with self._condition:
            self._stopped = True
            self._ready.clear()
            self._condition.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            if self._interrupt is not None:
                self._interrupt()
            self._thread.join(CLOSE_TIMEOUT)
            if self._thread.is_alive():
                logger.warning("the read-ahead thread still prepares a source after %.0f s: left behind", CLOSE_TIMEOUT)

    def __enter__(self) -> ReadAhead[T, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
