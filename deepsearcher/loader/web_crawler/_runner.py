"""Run the crawlers' coroutines from synchronous code, also when an event loop is running."""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

T = TypeVar("T")


def run_sync(make_coro: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine `make_coro()` to completion and return its result.

    Without a running loop in this thread it uses asyncio.run; inside one (Jupyter, an
    async web handler calling sync code) it runs on a private loop in a helper thread,
    blocking the caller until done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(make_coro))
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(_as_coroutine(make_coro))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="deepsearcher-crawl", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def _as_coroutine(make_coro: Callable[[], Awaitable[T]]) -> T:
    return await make_coro()


_DONE = object()


def iterate_sync(make_agen: Callable[[], AsyncIterator[T]], buffer: int = 16) -> Iterator[T]:
    """Iterate an async generator from synchronous code, on a private loop thread.

    At most `buffer` items wait for the consumer (the crawl pauses when it gets ahead);
    closing the iterator early stops the crawl and waits for its thread to finish.
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
        while not task.done():  # a closed iterator cancels the crawl even while it waits on the network
            if stop.is_set():
                task.cancel()
                break
            await asyncio.wait({task}, timeout=0.05)
        try:
            await task
        except asyncio.CancelledError:
            if not stop.is_set():
                raise

    def target() -> None:
        try:
            asyncio.run(produce())
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            items.put(("error", exc))
        else:
            items.put(("done", _DONE))

    thread = threading.Thread(target=target, name="deepsearcher-crawl-stream", daemon=True)
    thread.start()
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
        while thread.is_alive():
            try:
                items.get(timeout=0.05)
            except queue.Empty:
                pass
        thread.join()
