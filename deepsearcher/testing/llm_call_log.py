"""Record every LLM call of a real model by prompt kind: what the real-model tests and
benchmarks/agents_real_llm.py count (calls, repair retries, tokens per kind of prompt)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.agent import prompts

#: The first words of each agent prompt → its kind.
_KINDS = {
    name.lower(): template.split("{")[0].strip()[:40]
    for name, template in vars(prompts).items()
    if name.isupper() and isinstance(template, str) and "{" in template and not name.startswith("ANSWER_STYLE")
}
REPAIR_MARK = "Your reply above could not be read"


def prompt_kind(text: str) -> str:
    """The agent prompt `text` was built from (judge_chunk, sub_queries, answer, ...), else "other"."""
    for kind, lead in _KINDS.items():
        if lead and text.startswith(lead):
            return kind
    return "other"


@dataclass
class CallLog:
    """Counts per prompt kind: calls, repair retries (a reply that did not parse the first time)."""

    calls: Counter[str] = field(default_factory=Counter)
    repairs: Counter[str] = field(default_factory=Counter)
    replies: list[tuple[str, str]] = field(default_factory=list)

    def attach(self, llm: Any) -> Any:
        """Wrap `llm.achat` and `llm.astream` on this instance; returns the llm."""
        achat, astream = llm.achat, llm.astream

        async def logged_achat(messages: object, **kwargs: object) -> Any:
            kind = self._kind(messages)
            response = await achat(messages, **kwargs)
            self.replies.append((kind, response.content))
            return response

        def logged_astream(messages: object, **kwargs: object) -> Any:
            self._kind(messages)
            return astream(messages, **kwargs)

        llm.achat, llm.astream = logged_achat, logged_astream
        return llm

    def _kind(self, messages: object) -> str:
        texts = [m.get("content", "") for m in messages] if isinstance(messages, list) else [str(messages)]
        kind = prompt_kind(str(texts[0]))
        self.calls[kind] += 1
        if any(REPAIR_MARK in str(t) for t in texts):
            self.repairs[kind] += 1
        return kind

    def reset(self) -> None:
        self.calls.clear()
        self.repairs.clear()
        self.replies.clear()
