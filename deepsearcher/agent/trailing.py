"""A statement that asks about its last thing, named first: "Kate Ramsay is a fictional character
from an Australian soap opera created by who?" cannot be searched for its answer (Home and Away's
creator is on a page that names neither Kate Ramsay nor her character), so the thing is asked for
first ("Kate Ramsay is a fictional character from which Australian soap opera?") and, with its
name, the rest ("By whom was Home and Away created?"). agent/bridge.py runs the hop.

The thing is the last noun phrase with an article before the part that holds the question word,
joined to it by a relative pronoun, "whose", ", and <be>" or a participle ("developed by").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepsearcher.agent.extract import answer_kind

#: the answers of these questions are compared, not chained
NOT_CHAINED = frozenset({"yes or no", "one of the choices the question names"})

_WH = r"(?:who|whom|what|which|when|where)"
_BE = r"(?:is|was|are|were)"
#: a declarative question that asks about its last thing ("Kate Ramsay is a character from an
#: Australian soap opera created by who?"): the thing (no other article inside it), then how the
#: asking part joins it: a relative pronoun, "whose", ", and <be>", or a participle ("created by")
_TAIL = re.compile(
    rf"^(?P<stem>\S.*?\s)(?:an?|the)\s+(?P<thing>(?:(?!\b(?:an?|the|that|which|who|whose|whom|{_BE}|has|had)\b"
    rf"|(?<![\w-])and(?![\w-]))[^?,])+?)"
    rf"(?P<link>\s+(?:that|which|who)\s+|\s+whose\s+|,?\s+and\s+(?={_BE}\s)|\s+(?=\w+(?:ed|en|wn|rn)\s+(?:by|in|on|at|from|for|with)\s))"
    rf"(?P<rest>[^?]*\b{_WH}\b[^?]*?)\s*\?\s*$",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(rf"^\W*(?:{_WH}|how|why|in|on|at|by|for|from|to|{_BE}|do|does|did|has|have|had)\b", re.I)
_AND_ASK = re.compile(rf",?\s+and\s+({_BE}\s.*)$", re.IGNORECASE)
#: "Scott Howell is a consultant who…": the thing is the subject itself, nothing to find; "There
#: is a country where…" or a second sentence: more than one thing is described
_NOT_A_TAIL_STEM = re.compile(rf"\s{_BE}\s+$|^\s*(?:there|it)\s", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[a-z0-9][.!;]\s+[A-Z]")
_QUOTED_NAME = re.compile(r"[\"“]([^\"”]+)[\"”]")
#: "godfather is whom" (after "whose"), "is based where", "founded by who": the parts turned into
#: a question about the thing's name once it is known
_WHOSE_ASK = re.compile(rf"^(?P<role>.+?)\s+(?P<be>{_BE})\s+(?P<wh>who|whom|what)$", re.I)
_BE_ASK = re.compile(
    rf"^(?P<be>{_BE})\s+(?:(?P<part>\w+)\s+by\s+(?P<by>{_WH}(?:\s+\w+)?)|(?P<mid>.+?)\s+(?P<wh>{_WH}))$", re.I
)
_PARTICIPLE_ASK = re.compile(
    rf"^(?P<part>\w+)\s+(?P<prep>by|in|on|at|from|for|with)\s+(?P<wh>{_WH}(?:\s+\w+){{0,2}})$", re.I
)


@dataclass(frozen=True)
class Tail:
    """A declarative question split at its last thing: the hop that names the thing ("Kate Ramsay
    is a fictional character from which Australian soap opera?"), or the thing's name when the
    question quotes it, and the question to ask once it is named ("By whom was Home and Away
    created?")."""

    hop: str
    named: str
    link: str
    rest: str

    def asked_of(self, name: str) -> str:
        """The question left once the thing is known to be `name`."""
        rest = " ".join(self.rest.split())
        link = self.link.strip(" ,").casefold()
        if link == "whose":
            whose = _WHOSE_ASK.match(rest)
            if whose:
                asks = "What" if whose["wh"].casefold() == "what" else "Who"
                return f"{asks} {whose['be']} {name}'s {whose['role']}?"
            return f"{name}'s {rest}?"
        be = _BE_ASK.match(rest) if link != "" else None
        if be and be["part"]:
            return f"By {_whom(be['by'])} {be['be']} {name} {be['part']}?"
        if be:
            return f"{be['wh'].capitalize()} {be['be']} {name} {be['mid']}?"
        participle = _PARTICIPLE_ASK.match(rest) if link == "" else None
        if participle:
            return f"{participle['prep'].capitalize()} {_whom(participle['wh'])} was {name} {participle['part']}?"
        return f"{name} {rest}?"


def _whom(wh: str) -> str:
    return "whom" if wh.casefold() == "who" else wh


def trailing_ask(question: str) -> Tail | None:
    """The question's last thing and what it asks of it, for a declarative question whose question
    word comes at its end ("…a racing video game developed by what company?"); else None."""
    if _QUESTION_START.match(question) or answer_kind(question) in NOT_CHAINED:
        return None
    match = _TAIL.match(question.strip())
    if not match or len(match["stem"].split()) < 2 or _NOT_A_TAIL_STEM.search(match["stem"]):
        return None
    if _SENTENCE_BREAK.search(question.strip()):  # "…held in a European country. King Albert I of …"
        return None
    thing = match["thing"].strip()
    quoted = _QUOTED_NAME.search(thing)
    hop = f"{match['stem']}which {thing}?"
    link, rest = match["link"], match["rest"]
    joined = _AND_ASK.search(rest)  # "…house that was founded in 2005, and is based where": the last part asks
    if joined:
        link, rest = " and ", joined.group(1)
    return Tail(hop=hop, named=quoted.group(1) if quoted else "", link=link, rest=rest)
