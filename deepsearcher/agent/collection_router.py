"""CollectionRouter: pick the collections worth searching from their descriptions."""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.agent import prompts
from deepsearcher.agent.context import RunContext
from deepsearcher.llm._sync import run_sync
from deepsearcher.llm.parsing import parse_list

logger = logging.getLogger("deepsearcher.agent")


class CollectionRouter:
    """0 collections → warning, none; 1 → used without an LLM call; many → the LLM picks.

    Collections without a description and the default collection are always added
    (nothing can be judged about the former; the latter is the main store); names the
    LLM invents are dropped; nothing outside `authorized_collections` is ever listed.
    """

    def __init__(self, llm: Any, vector_db: Any, dim: int, **kwargs: Any) -> None:
        self.llm = llm
        self.vector_db = vector_db
        self.dim = dim

    def _candidates(self, ctx: RunContext) -> list[Any]:
        infos = self.vector_db.list_collections(dim=self.dim)
        if ctx.authorized_collections is not None:
            infos = [info for info in infos if info.collection_name in ctx.authorized_collections]
        return infos

    async def aroute(self, query: str, ctx: RunContext) -> list[str]:
        infos = self._candidates(ctx)
        if not infos:
            logger.warning("No collections to search: load documents first (deepsearcher load PATH).")
            ctx.emit("collections", collections=[], routed=False)
            return []
        if len(infos) == 1:
            chosen = [infos[0].collection_name]
            ctx.emit("collections", collections=chosen, routed=False)
            return chosen
        listing = "\n".join(f"- {info.collection_name}: {info.description or '(no description)'}" for info in infos)
        picked = await ctx.structured(
            self.llm,
            prompts.COLLECTION_ROUTER.format(query=query, collections=listing),
            parse_list,
            "collection_routing",
            json_mode=True,
        )
        known = {info.collection_name for info in infos}
        chosen = []
        for name in picked:
            if name in known and name not in chosen:
                chosen.append(name)
            elif name not in known:
                logger.info(
                    "CollectionRouter dropped unknown collection name %r from the LLM",
                    name,
                )
        for info in infos:
            always = not info.description or info.collection_name == self.vector_db.default_collection
            if always and info.collection_name not in chosen:
                chosen.append(info.collection_name)
        ctx.emit("collections", collections=chosen, routed=True)
        return chosen

    def invoke(self, query: str, dim: int | None = None, **kwargs: Any) -> tuple[list[str], int]:
        """DeepSearcher's contract: (selected collection names, tokens used)."""
        authorized = kwargs.get("authorized_collections")
        ctx = RunContext(authorized_collections=set(authorized) if authorized is not None else None)
        chosen = run_sync(self.aroute(query, ctx))
        return chosen, ctx.total_tokens
