"""A text longer than the model's window, embedded as several windows and pooled into one vector.

A transformer encoder reads at most its window of tokens and silently drops the rest, so the
end of a long chunk would never reach its vector. Each window is encoded like a text of its
own and the text's vector is the token-weighted mean of its windows' vectors (mean pooling
over all its tokens, taken window by window). ONNX Runtime gets its windows from the
tokenizer's overflowing encodings; sentence-transformers and FastEmbed from `token_windows`
below; a server that refuses a text past its context (Ollama) from `halves`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACE = re.compile(r"\s")


def pool_windows(
    count: int, owners: Sequence[int], tokens: Sequence[int], vectors: Sequence[Sequence[float]], normalize: bool
) -> list[list[float]]:
    """One vector per text: the token-weighted mean of the vectors of its windows
    (`owners[i]` is the text window `i` belongs to, `tokens[i]` its length)."""
    import numpy as np

    pooled = np.zeros((count, len(vectors[0])), dtype=np.float64)
    weights = np.asarray(tokens, dtype=np.float64)
    np.add.at(pooled, list(owners), np.asarray(vectors, dtype=np.float64) * weights[:, None])
    if normalize:
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    else:
        pooled /= np.bincount(list(owners), weights=weights, minlength=count)[:, None]
    return pooled.astype(np.float32).tolist()


def token_windows(text: str, offsets: Sequence[tuple[int, int]], window: int) -> list[tuple[str, int]]:
    """`text` cut into pieces of at most `window` tokens, as (piece, tokens) pairs.

    `offsets` are the character spans of the text's tokens (no special tokens). A cut falls
    before a token that starts a word where one is in reach, so a piece re-tokenised on its
    own gives the same tokens; a text that fits is returned whole."""
    spans = [span for span in offsets if span[1] > span[0]]
    if len(spans) <= window:
        return [(text, max(1, len(spans)))]
    pieces: list[tuple[str, int]] = []
    start = 0
    while start < len(spans):
        end = min(start + window, len(spans))
        if end < len(spans):
            cut = end
            while cut > start + 1 and spans[cut][0] == spans[cut - 1][1]:  # glued to the last token: mid-word
                cut -= 1
            if cut > start + window // 2:  # a word start in reach; else cut mid-word
                end = cut
        begin = 0 if start == 0 else spans[start][0]
        finish = len(text) if end == len(spans) else spans[end][0]
        pieces.append((text[begin:finish], end - start))
        start = end
    return pieces


def halves(text: str) -> tuple[str, str] | None:
    """`text` cut in two near its middle, at the whitespace closest to it (mid-word only when
    it has none); None for a text too short to cut. For a server that refuses a text longer
    than its context and whose tokenizer is not at hand: each half is embedded on its own."""
    middle = len(text) // 2
    if middle == 0:
        return None
    spaces = [match.start() for match in _SPACE.finditer(text) if 0 < match.start() < len(text) - 1]
    cut = min(spaces, key=lambda at: abs(at - middle)) if spaces else middle
    return text[:cut], text[cut:]
