"""An answer linked to what was asked: the passage that holds it is about the question's names, or
shares a name with a passage that is (the bridge of a two-hop question).

Why: the local 1.5B copies a name of the right kind from any passage it read. "What body of water
is near the location where the Siege of Cassel took place?" was answered "Lake Oesa" from a page
that says nothing of Cassel, nor of any place a Cassel page names. Replayed over the 123 distinct
answers (not yes/no) of issue 30's 1.5B runs in rounds 10-12, with the pages they read, the check
refuses 8 answers, all wrong, and no right one. Such an answer is grounded (its words are in a
passage) but not supported, so the agent says what it found instead.
"""

from __future__ import annotations

import re
from collections import Counter

from deepsearcher.agent.citations import content_words, grounded_in
from deepsearcher.agent.result import Source
from deepsearcher.graph.entities import mentions

#: the longest name looked for inside another passage, in words
_LONGEST_NAME = 6

#: a name more sources than this (or than half of those read) mention is common ground, not a
#: link: "United States" joined a page on an Ohio village to one on a West Virginia hamlet
_FEWEST_COMMON = 3


#: a title naming which of several namesakes a page is about: "David Jones (rugby)"
_QUALIFIED_TITLE = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<qualifier>[^()]+)\)\s*$")


def _whole(source: Source) -> str:
    return f"{source.title or ''}\n{source.text}"


def _stems(text: str) -> list[str]:
    """Content words without a plural "s": "Aurora Cells" names "the Aurora Cell"."""
    return [word[:-1] if len(word) > 3 and word.endswith("s") else word for word in content_words(text)]


def _about(source: Source, names: list[str]) -> bool:
    """Whether `source` holds one of `names` as a phrase (stop words and a plural "s" aside): a page
    on a NASCAR game that holds "world", "drivers" and "championship" apart is not about the World
    Drivers' Championship, nor is a page holding "County" about McDowell County."""
    words = _stems(_whole(source))
    for name in names:
        wanted = _stems(name)
        size = len(wanted)
        if size and any(words[i : i + size] == wanted for i in range(len(words) - size + 1)):
            return True
    return False


def _namesakes(subjects: list[str], sources: list[Source], asked: str) -> list[Source]:
    """The sources about a namesake of a question's name: the pages read include one titled by the
    name and a qualifier the question states ("David Jones (rugby)" for "David Jones is an
    international in rugby union and …"), and these hold the name but neither that title nor the
    qualifier. Why: the 1.5B answered "1825" from a page on the David Jones who founded a Sydney
    store; it holds "David Jones" and shares "Welsh" with the rugby player's page."""
    asked_words = set(_stems(asked))
    qualified: dict[tuple[str, ...], list[tuple[str, Source]]] = {}
    for source in sources:
        match = _QUALIFIED_TITLE.match(source.title or "")
        qualifier = _stems(match["qualifier"]) if match else []
        if match and qualifier and set(qualifier) <= asked_words:
            qualified.setdefault(tuple(_stems(match["name"])), []).append((match["qualifier"], source))
    if not qualified:
        return []
    named = [name for name in subjects if tuple(_stems(name)) in qualified]

    def namesake(source: Source) -> bool:
        if not _about(source, named) or _about(source, [name for name in subjects if name not in named]):
            return False
        pages = [page for name in named for page in qualified[tuple(_stems(name))]]
        return all(source is not page and not _about(source, [qualifier]) for qualifier, page in pages)

    return [source for source in sources if namesake(source)]


def _names(source: Source) -> set[tuple[str, ...]]:
    """The names a source's title and text mention (apart: a title and a first word would join)."""
    found = (tuple(_stems(name)) for part in (source.title or "", source.text) for name in mentions(part))
    return {name for name in found if 0 < len(name) <= _LONGEST_NAME}


def _phrases(source: Source) -> set[tuple[str, ...]]:
    """Every run of up to _LONGEST_NAME words of the source: where a name of another is looked for."""
    words = _stems(_whole(source))
    return {tuple(words[i : i + n]) for n in range(1, _LONGEST_NAME + 1) for i in range(len(words) - n + 1)}


def linked_to_question(short: str, subjects: list[str], sources: list[Source], asked: str = "") -> bool:
    """Whether a source holding `short` is about one of `subjects` (the question's names, a hop's
    answer: `_about`) or shares a name with a source that is; names most sources mention do not
    count, and a source about a namesake (`_namesakes`; `asked`: the question's words) links
    nothing. True when there is nothing to link: no subject, or no one source holding the whole
    answer (the grounding check judges that)."""
    holding = [source for source in sources if grounded_in(short, [_whole(source)])]
    if not subjects or not holding:
        return True
    others = {id(source) for source in _namesakes(subjects, sources, asked)}
    holding = [source for source in holding if id(source) not in others]
    sources = [source for source in sources if id(source) not in others]
    about = [source for source in sources if _about(source, subjects)]
    if any(source in about for source in holding):
        return True
    if not about:
        return False
    names = {id(source): _names(source) for source in sources}
    mentioned = Counter(name for found in names.values() for name in found)
    most = max(_FEWEST_COMMON, len(sources) // 2)

    def linking(source: Source) -> set[tuple[str, ...]]:
        return {name for name in names[id(source)] if mentioned[name] <= most}

    # each source's names and phrases once: a document's merged chunks make thousands of phrases
    bridge_names = set().union(*(linking(source) for source in about))
    bridge_phrases = set().union(*(_phrases(source) for source in about))
    return any(bridge_names & _phrases(source) or linking(source) & bridge_phrases for source in holding)


def citable(short: str, subjects: list[str], sources: list[Source], asked: str = "") -> list[Source]:
    """The sources an answer may cite: those holding the short answer or about one of `subjects`,
    not about a namesake (all of them when there is no subject). Why: the 1.5B cited a page on
    Harry Potter's translations beside the one stating "Latin" for Haymo of Faversham's era; a
    sentence only an unrelated page supports is marked unsupported instead."""
    if not subjects:
        return sources
    others = {id(source) for source in _namesakes(subjects, sources, asked)}
    return [
        source
        for source in sources
        if id(source) not in others and (grounded_in(short, [_whole(source)]) or _about(source, subjects))
    ]
