"""Names a text mentions, found by their shape: runs of capitalised words.

Why a heuristic and not an NER model: it runs in microseconds per chunk with nothing to
install, and on the shared multi-hop sets it finds the bridging names (film → director,
song → performer) that the second hop needs (benchmarks/retrieval.py measures the gain).
A run may hold lower-case joiners ("University of Texas", "Leonardo da Vinci"); a sentence's
opening word is dropped when it is a common one ("The", "In", "He").
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: Words that join the capitalised words of one name.
_JOINERS = "of|the|de|la|von|van|and|for|du|del|der|le|da|di|y|&"
_WORD = r"(?:[A-Z]\.|[A-Z][\w'’\-]*)"
_NAME = re.compile(rf"{_WORD}(?:\s+(?:(?:{_JOINERS})\s+)*(?:{_WORD}|\d{{2,4}}\b))*")
_AND = re.compile(r"\s+(?:and|&)\s+")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{3,80})[\"”]")
#: Capitalised at a sentence's start, or too common to name anything.
_COMMON = frozenset(
    "the a an in on at it he she they we i you his her its their this that these those as after before during "
    "when while from by for with but and or if there what which who whom where how why is are was were of to "
    "also however although according since until unlike despite both each every".split()
)


@functools.lru_cache(maxsize=65536)
def normalise(name: str) -> str:
    """The key two spellings of one name share: case, accents, punctuation and a leading
    article folded ("The Beatles" and "beatles" meet). Cached: a graph walk normalises the same
    names of the same chunks for every search of a question (tens of thousands of calls)."""
    folded = unicodedata.normalize("NFKD", name.casefold().replace("’", "'"))
    folded = "".join(char for char in folded if not unicodedata.combining(char))
    folded = re.sub(r"[^\w' ]+", " ", folded)
    folded = re.sub(r"^(?:the|a|an)\s+", "", folded.strip())
    return re.sub(r"\s+", " ", folded).strip()


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_key(title: str) -> str:
    """The key a chunk's title is found by: `normalise`d, without a trailing disambiguation
    ("Hello Love (song)", "Safe (2012 film)" are found by the names "Hello Love", "Safe"
    that other passages write; 15% of the shared sets' gold titles carry one)."""
    return normalise(_DISAMBIGUATION.sub("", title) or title)


def mentions(text: str) -> list[str]:
    """The names `text` mentions, as written, in order of first appearance, each once (by key)."""
    return list(_mentions(text))


@functools.lru_cache(maxsize=4096)
def _mentions(text: str) -> tuple[str, ...]:
    """`mentions`, cached by text: DeepSearch's searches meet the same chunks again and again."""
    found: list[str] = []
    for match in _NAME.finditer(text):
        words = match.group(0).split()
        while words and words[0].casefold() in _COMMON:
            words = words[1:]
        if words:
            name = " ".join(words)
            found.append(name)  # "Pride and Prejudice" is one name, "Lester Smith and Tim Brown" two:
            found.extend(part for part in _AND.split(name) if part != name)  # keep the whole and its parts
    found.extend(match.group(1).strip() for match in _QUOTED.finditer(text))
    seen: set[str] = set()
    names = []
    for name in found:
        key = normalise(name)
        if len(key) >= 3 and key not in _COMMON and not key.isdigit() and key not in seen:
            seen.add(key)
            names.append(name)
    return tuple(names)
