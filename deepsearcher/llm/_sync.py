"""Run coroutines from synchronous code, also when the caller is inside a running loop.

`asyncio.run` cannot be used inside a running event loop (Jupyter, an async web handler
calling sync code), so sync wrappers hand the coroutine to one private event loop that
lives in a daemon thread and wait for its result.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from concurrent.futures import Future
from typing import Any, AsyncIterator, Coroutine, Iterator, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The private loop (started on first use)."""
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
    """Run `coro` to completion from sync code and return its result (or raise its error)."""
    if _in_background_thread():
        # Sync call made from code already running on the private loop: blocking that
        # loop would deadlock, so use a short-lived loop in another thread.
        result: Future[T] = Future()

        def run() -> None:
            try:
                result.set_result(asyncio.run(coro))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                result.set_exception(exc)

        threading.Thread(target=run, daemon=True).start()
        return result.result()
    future = asyncio.run_coroutine_threadsafe(coro, background_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def iterate_sync(agen: AsyncIterator[T]) -> Iterator[T]:
    """Iterate an async iterator from sync code, one item at a time, on the private loop."""
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
