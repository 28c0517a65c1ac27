"""Token counts estimated from text, for servers whose replies report no usage.

llama.cpp's server ignores `stream_options.include_usage`, so a streamed answer would count
0 tokens and every budget would undercount. About 4 characters of English text make one token
for the BPE tokenizers in use; a CJK character is about one token. The estimate is marked
(`Usage.estimated`) so reports can say so.
"""

from __future__ import annotations

import math
import re

from deepsearcher.types.json import JSONObject

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: The chat template's tokens around each message (role markers, separators).
_PER_MESSAGE = 4


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is (0 for empty text)."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def estimate_counts(messages: list[JSONObject], completion: str) -> tuple[int, int]:
    """(prompt tokens, completion tokens) of one call, estimated: its messages, then `completion`."""
    from deepsearcher.llm._messages import text_of

    prompt = sum(estimate_tokens(text_of(m.get("content"))) + _PER_MESSAGE for m in messages)
    return prompt, estimate_tokens(completion)
