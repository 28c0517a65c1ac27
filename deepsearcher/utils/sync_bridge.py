"""Run async code from sync code, also when the caller sits inside a running event loop.

`asyncio.run` cannot be used inside a running loop (Jupyter, an async web handler calling
sync code), so the sync wrappers run coroutines in another thread. Two ways, for two kinds
of work:

- `run_sync` / `iterate_sync`: on one private event loop in a daemon thread, shared by
  every caller. For LLM and embedding calls: an SDK client (and its connection pool)
  belongs to the loop it was made on, so all calls stay on that one loop.
- `run_isolated` / `iterate_isolated`: on a fresh loop of their own (in the caller's
  thread when no loop runs there, else in a helper thread). For long jobs such as crawls,
  which must not hold up the shared loop. The iterator reads ahead at most `buffer`
  items, and closing it early cancels the job.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from concurrent.futures import wait as wait_for_future
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = [
    "background_loop",
    "iterate_isolated",
    "iterate_sync",
    "run_isolated",
    "run_sync",
]

logger = logging.getLogger(__name__)
#: How long closing a stream early waits for its producer to stop before leaving it (a daemon thread).
CLOSE_TIMEOUT = 10.0

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _start_thread(function: Callable[[], T], name: str) -> Future[T]:
    """Call `function()` in a new daemon thread; its result or exception lands in the future."""
    result: Future[T] = Future()

    def target() -> None:
        try:
            result.set_result(function())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
            result.set_exception(exc)

    threading.Thread(target=target, name=name, daemon=True).start()
    return result


async def _as_coroutine(make_coro: Callable[[], Awaitable[T]]) -> T:
    return await make_coro()


# --------------------------------------------------------------------------- fresh loops


def run_isolated(make_coro: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make_coro()` to completion on a fresh event loop; return its result.

    Without a running loop in this thread that is asyncio.run here; inside one, it runs
    in a helper thread while the caller blocks until it is done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(make_coro))
    return _start_thread(lambda: asyncio.run(_as_coroutine(make_coro)), "deepsearcher-sync").result()


def iterate_isolated(make_agen: Callable[[], AsyncIterator[T]], buffer: int = 16) -> Iterator[T]:
    """Iterate the async generator `make_agen()` from sync code, on a fresh loop in a helper thread.

    At most `buffer` items wait for the consumer (the producer pauses when it gets ahead);
    closing the iterator early cancels the producer and waits for its thread to finish.
    """
    items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=buffer)
    stop = threading.Event()

    async def pump() -> None:
        loop = asyncio.get_running_loop()
        agen = make_agen()
        try:
            async for item in agen:
                await loop.run_in_executor(None, items.put, ("item", item))
        finally:
            await agen.aclose()  # type: ignore[attr-defined]

    async def produce() -> None:
        task = asyncio.ensure_future(pump())
        while not task.done():  # a closed iterator cancels the producer even while it waits on the network
            if stop.is_set():
                task.cancel()
                break
            await asyncio.wait({task}, timeout=0.05)
        try:
            await task
        except asyncio.CancelledError:
            if not stop.is_set():
                raise

    def run() -> None:
        try:
            asyncio.run(produce())
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            items.put(("error", exc))
        else:
            items.put(("done", None))

    worker = _start_thread(run, "deepsearcher-stream")
    try:
        while True:
            kind, value = items.get()
            if kind == "item":
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        stop.set()
        deadline = time.monotonic() + CLOSE_TIMEOUT
        while not worker.done():
            if time.monotonic() > deadline:  # nothing waits forever: a producer ignoring its cancellation is left
                logger.warning(
                    "A stream's producer did not stop within %g s of being closed: left running.", CLOSE_TIMEOUT
                )
                break
            if items.empty():
                wait_for_future([worker], timeout=0.05)
            else:
                items.get_nowait()  # drop what the producer still hands over, so that it sees `stop`


# --------------------------------------------------------------------------- the shared loop


def background_loop() -> asyncio.AbstractEventLoop:
    """The private shared loop (started on first use)."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed() or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=run, name="deepsearcher-llm-loop", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread = loop, thread
        return _loop


def _in_background_thread() -> bool:
    return _thread is not None and threading.current_thread() is _thread


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on the shared loop and return its result (or raise its error)."""
    if _in_background_thread():
        # A sync call made from code already running on the shared loop: blocking that
        # loop would deadlock, so this one runs on a fresh loop in another thread.
        return run_isolated(lambda: coro)
    future = asyncio.run_coroutine_threadsafe(coro, background_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def iterate_sync(agen: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async iterator from sync code, one item at a time, on the shared loop."""
    iterator = agen.__aiter__()

    async def next_item() -> tuple[bool, Any]:
        try:
            return True, await iterator.__anext__()
        except StopAsyncIteration:
            return False, None

    while True:
        ok, item = run_sync(next_item())
        if not ok:
            return
        yield item


def _shutdown() -> None:
    loop = _loop
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)


atexit.register(_shutdown)
