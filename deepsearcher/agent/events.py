"""Step events an agent emits while it works (route chosen, searches, answer tokens...)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Kinds of events, in the order a DeepSearch run usually emits them.
EVENT_KINDS = (
    "route",  # the RAGRouter chose an agent
    "collections",  # the CollectionRouter chose collections
    "sub_queries",  # the question was decomposed
    "search",  # one query searched in one collection, with how many chunks were accepted
    "judge",  # relevance judgements of one iteration finished
    "reflection",  # gap queries (or stop) decided
    "intermediate_answer",  # ChainOfRAG: one hop answered
    "budget_stop",  # the token budget ended the search early
    "deadline_stop",  # the query's deadline ended the search early
    "answer_token",  # one streamed token of the final answer
    "answer",  # the final answer is complete
)


@dataclass
class StepEvent:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "at": self.at, **self.data}


EventCallback = Callable[[StepEvent], None]
