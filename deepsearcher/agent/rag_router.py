"""RAGRouter: pick the agent for a question from the agents' own descriptions."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from deepsearcher.agent import prompts
from deepsearcher.agent.base import AgentOutput, RAGAgent
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.options import unknown_option, validate_options
from deepsearcher.agent.searchable import searchable_collections
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.llm.base import BaseLLM
from deepsearcher.llm.errors import LLMOutputError
from deepsearcher.llm.parsing import parse_number
from deepsearcher.types import RetrievalResult
from deepsearcher.types.errors import BadInputError
from deepsearcher.vector_db.base import BaseVectorDB

logger = logging.getLogger("deepsearcher.agent")

#: Models of at most this many billion parameters judge passages too poorly for an iterative agent
#: (issue 30: the 0.5B said NO to every passage, so DeepSearch answered from a fallback, 2-3x slower).
SMALL_MODEL_BILLIONS = 1.0
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.I)


def model_billions(llm: BaseLLM) -> float | None:
    """The parameter count a model's name states ("qwen2.5-coder-0.5b-instruct" -> 0.5), else None."""
    match = _SIZE.search(str(getattr(llm, "model", "") or ""))
    return float(match.group(1)) if match else None


@register_provider("agent", "auto")
class RAGRouter(RAGAgent):
    """Routes each question to one of `rag_agents`; with one agent the LLM is not asked."""

    routes_agents = True
    label = "auto (router)"

    @classmethod
    def from_settings(
        cls,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        settings: Mapping[str, Any],
        agents: Sequence[RAGAgent] = (),
    ) -> RAGAgent:
        return cls(llm=llm, rag_agents=list(agents))

    def __init__(
        self,
        llm: BaseLLM,
        rag_agents: list[RAGAgent],
        agent_descriptions: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if not rag_agents:
            raise ValueError("RAGRouter needs at least one agent.")
        self.llm = llm
        self.rag_agents = list(rag_agents)
        self.agent_descriptions = agent_descriptions or [
            getattr(type(agent), "__description__", type(agent).__name__) for agent in self.rag_agents
        ]
        first = self.rag_agents[0]
        self.vector_db, self.embedding_model = first.vector_db, first.embedding_model
        self.retriever = first.retriever  # its warm-up warms the store every routed agent searches

    def _check_options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Options given for the routed agent: each must be one that some agent has, valid for every
        agent that has it; nothing is filled in (the chosen agent keeps its own defaults)."""
        given = {key: value for key, value in kwargs.items() if value is not None}
        known = sorted({name for agent in self.rag_agents for name in agent.Options.model_fields})
        for key in given:
            if key not in known:
                raise BadInputError(unknown_option(key, known, f"{self.name} options"))
        checked: dict[str, Any] = {}
        for agent in self.rag_agents:
            own = {key: value for key, value in given.items() if key in agent.Options.model_fields}
            valid = validate_options(agent.Options, {**agent.options.model_dump(), **own}, f"{agent.name} options")
            checked.update({key: getattr(valid, key) for key in own})
        return checked

    async def aroute(self, query: str, ctx: RunContext) -> RAGAgent:
        if len(self.rag_agents) == 1:
            agent = self.rag_agents[0]
            ctx.emit("route", agent=agent.name, routed=False)
            return agent
        size = model_billions(self.llm)
        single = [agent for agent in self.rag_agents if not agent.iterative]
        if size is not None and size <= SMALL_MODEL_BILLIONS and single:
            agent = single[0]
            reason = f"the model ({size:g}B parameters) is too small to judge passages in rounds"
            ctx.emit("route", agent=agent.name, routed=False, reason=reason)
            return agent
        listing = "\n".join(f"[{i}] {description}" for i, description in enumerate(self.agent_descriptions, 1))
        prompt = prompts.RAG_ROUTER.format(agents=listing, query=query)
        number: int = await ctx.structured(self.llm, prompt, parse_number, "agent_routing")
        if not 1 <= number <= len(self.rag_agents):
            raise LLMOutputError(
                "agent_routing",
                str(number),
                f"the agent number must be between 1 and {len(self.rag_agents)}",
            )
        agent = self.rag_agents[number - 1]
        logger.info("RAGRouter chose %s for: %s", agent.name, query)
        ctx.emit("route", agent=agent.name, routed=True)
        return agent

    async def _execute(self, query: str, ctx: RunContext, collections: list[str] | None = None) -> AgentOutput:
        # nothing searchable is refused before the routing call: no LLM call for a query that cannot be answered
        if ctx.searchable is None:
            searchable_collections(
                self.vector_db, self.embedding_model.dimension, ctx.authorized_collections, collections
            )
        agent = await self.aroute(query, ctx)
        return await agent._execute(query, ctx, collections=collections)

    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        agent = await self.aroute(query, ctx)
        return await agent._retrieve(query, ctx, collections)

    async def _collections(self, query: str, ctx: RunContext, collections: list[str] | None) -> list[str]:
        return await self.rag_agents[0]._collections(query, ctx, collections)
