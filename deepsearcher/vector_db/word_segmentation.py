"""Chinese words made visible to a tokenizer that splits at spaces and punctuation.

Milvus Lite 3.x analyses BM25 text in Python, in our process. Its `jieba` tokenizer runs
jieba's dictionary walk on every word of every chunk, English included: 3.9 s of CPU for the
1,528 chunks of `benchmarks/real_corpus.py`'s corpus, against 0.08 s for the regex
tokenizer, and on two cores that CPU comes out of the embedding model's share. So new Milvus
Lite collections use the regex (`standard`) tokenizer on text whose Chinese runs were cut
into words here first, by the same jieba search-mode cut the `jieba` tokenizer made:
English and other space-separated text never meets jieba, and jieba's dictionary is read only
when there is Chinese to cut. Searches cut their query text the same way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from types import ModuleType

#: CJK unified ideographs (jieba's own range for Chinese words) and extension A.
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def has_chinese(text: str) -> bool:
    """Whether `text` holds a run of Chinese characters (what `segment_chinese` cuts)."""
    return _HAN_RUN.search(text) is not None


def segment_chinese(text: str) -> str:
    """`text` with every run of Chinese characters replaced by its words, space-separated
    and set apart from neighbouring letters and digits ("北京2008年" → " 北京 2008 年 ")."""
    if not has_chinese(text):
        return text
    cut = _jieba_cut()
    return _HAN_RUN.sub(lambda run: " " + " ".join(cut(run.group())) + " ", text)


def load_dictionary() -> None:
    """Read jieba's dictionary now (~0.8 s of CPU), before the first Chinese text needs it."""
    _jieba().initialize()


def _jieba_cut() -> Callable[[str], list[str]]:
    return _jieba().lcut_for_search  # type: ignore[no-any-return]


def _jieba() -> ModuleType:
    import jieba

    jieba.setLogLevel(logging.WARNING)  # it logs its dictionary loading to stderr at DEBUG
    return jieba
