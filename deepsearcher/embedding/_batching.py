"""Length-sorted batching: the single biggest lever on a transformer encoder's CPU throughput.

A padded batch costs as much as its longest text times its size. Texts arriving in
document order mix short and long passages, so most of each batch is padding. Sorting a
window of texts by length and cutting batches from the sorted list keeps the padding
small; the vectors are put back in the caller's order afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

T = TypeVar("T")


def sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into `lengths`, grouped in batches of similar length (longest first)."""
    order = sorted(range(len(lengths)), key=lambda index: -lengths[index])
    size = max(1, int(batch_size))
    return [order[start : start + size] for start in range(0, len(order), size)]


def encode_sorted(
    items: Sequence[T],
    lengths: Sequence[int],
    batch_size: int,
    encode: Callable[[list[T]], Sequence[list[float]]],
    pool: Executor | None = None,
) -> list[list[float]]:
    """Run `encode` over length-sorted batches of `items` (on `pool`'s threads when given: the
    batches are independent); results come back in input order."""
    results: list[list[float] | None] = [None] * len(items)
    batches = sorted_batches(lengths, batch_size)

    def run(batch: list[int]) -> Sequence[list[float]]:
        return encode([items[i] for i in batch])

    outputs = pool.map(run, batches) if pool is not None and len(batches) > 1 else map(run, batches)
    for batch, vectors in zip(batches, outputs, strict=True):
        for index, vector in zip(batch, vectors, strict=False):
            results[index] = vector
    return results  # type: ignore[return-value]
