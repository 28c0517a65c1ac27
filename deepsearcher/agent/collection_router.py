"""CollectionRouter: pick the collections worth searching from their descriptions."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from deepsearcher.agent import prompts
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.web_cache import is_web_cache
from deepsearcher.llm._sync import run_sync
from deepsearcher.llm.base import BaseLLM
from deepsearcher.llm.parsing import parse_list
from deepsearcher.types.errors import NoSearchableDataError

if TYPE_CHECKING:
    from deepsearcher.vector_db.base import BaseVectorDB

logger = logging.getLogger("deepsearcher.agent")

#: The name the router lists the web under when the query's `web` option is auto.
WEB_CANDIDATE = "web"


def authorized_from(kwargs: dict[str, Any]) -> set[str] | None:
    """The caller's permitted collections from its keywords, removing them: ours
    (`authorized_collections`) or DeepSearcher's (`authorized_collection_set`); None: all."""
    ours = kwargs.pop("authorized_collections", None)
    theirs = kwargs.pop("authorized_collection_set", None)
    given = ours if ours is not None else theirs
    return set(given) if given is not None else None


def store_kwargs_from(kwargs: dict[str, Any]) -> dict[str, Any]:
    """DeepSearcher's caller context for the vector store: `tenant_id` (removed from `kwargs`) and
    `authorized_collection_set` as given (left for `authorized_from`, so call this first). Every
    search of the query passes them on to `search_data` (and a user's `CollectionRouter.invoke`
    gets them), where a user's own store reads them; ours ignore them."""
    given: dict[str, Any] = {}
    if kwargs.get("authorized_collection_set") is not None:
        given["authorized_collection_set"] = kwargs["authorized_collection_set"]
    tenant = kwargs.pop("tenant_id", None)
    if tenant is not None:
        given["tenant_id"] = tenant
    return given


def nothing_to_search(empty: Sequence[str]) -> NoSearchableDataError:
    """The refusal of a query with nothing searchable, naming the collections to load into:
    `empty` are those the caller may use (they exist but hold nothing); none means none exists."""
    if empty:
        names = ", ".join(f"'{name}'" for name in empty)
        what = f"nothing is loaded in {'collection' if len(empty) == 1 else 'collections'} {names}"
        target = empty[0]
    else:
        what, target = "nothing is loaded yet (there is no collection this query may use)", "NAME"
    return NoSearchableDataError(
        f"Nothing to search: {what}. Load documents first with `deepsearcher load PATH --collection {target}` "
        "(or POST /v1/load), then ask again."
    )


class CollectionRouter:
    """0 collections → warning, none; 1 → used without an LLM call; many → the LLM picks.

    Only collections holding documents count: an empty one has nothing to route to.
    Collections without a description and the default collection are always added
    (nothing can be judged about the former; the latter is the main store); names the
    LLM invents are dropped; nothing outside `authorized_collections` is ever listed.
    """

    def __init__(self, llm: BaseLLM, vector_db: BaseVectorDB, dim: int, **kwargs: Any) -> None:
        self.llm = llm
        self.vector_db = vector_db
        self.dim = dim
        self._all_collections: list[str] | None = None

    @property
    def all_collections(self) -> list[str]:
        """DeepSearcher's attribute: every collection of the router's dimension (read live: the
        router outlives loads); a list assigned to it is used instead."""
        if self._all_collections is not None:
            return list(self._all_collections)
        return [
            info.collection_name
            for info in self.vector_db.list_collections(dim=self.dim)
            if not is_web_cache(info.collection_name)
        ]

    @all_collections.setter
    def all_collections(self, names: Iterable[str]) -> None:
        self._all_collections = list(names)

    def candidates(self, ctx: RunContext) -> list[Any]:
        """The collections of the router's dimension the query may use, loaded or not."""
        infos = [
            info for info in self.vector_db.list_collections(dim=self.dim) if not is_web_cache(info.collection_name)
        ]
        if ctx.authorized_collections is not None:
            infos = [info for info in infos if info.collection_name in ctx.authorized_collections]
        return infos

    async def aroute(self, query: str, ctx: RunContext) -> list[str]:
        """With `ctx.extra["web_candidate"]` (the query's `web: auto`) the web is one more candidate, listed
        with that description even beside a single collection; picking it sets `ctx.extra["web_wanted"]`."""
        web = ctx.extra.get("web_candidate")
        searchable = ctx.searchable
        infos = [
            info
            for info in self.candidates(ctx)
            if (
                info.collection_name in searchable
                if searchable is not None
                else self.vector_db.has_documents(info.collection_name)
            )
        ]
        if not infos:
            logger.warning("No collection holding documents to search: load some first (deepsearcher load PATH).")
            ctx.emit("collections", collections=[], routed=False)
            return []
        if len(infos) == 1 and not web:
            chosen = [infos[0].collection_name]
            ctx.emit("collections", collections=chosen, routed=False)
            return chosen
        listing = "\n".join(f"- {info.collection_name}: {info.description or '(no description)'}" for info in infos)
        if web:
            listing += f"\n- {WEB_CANDIDATE}: {web}"
        picked = await ctx.structured(
            self.llm,
            prompts.COLLECTION_ROUTER.format(query=query, collections=listing),
            parse_list,
            "collection_routing",
            json_mode=True,
        )
        known = {info.collection_name for info in infos}
        chosen = []
        if web and WEB_CANDIDATE in picked:
            ctx.extra["web_wanted"] = True
        for name in picked:
            if name == WEB_CANDIDATE and web:
                continue
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
        if not chosen:  # the LLM judged none relevant: better every permitted collection than no answer
            chosen = [info.collection_name for info in infos]
            logger.warning(
                "The collection router picked no collection for %r: searching all %d permitted ones (%s).",
                query,
                len(chosen),
                ", ".join(chosen),
            )
            ctx.emit("collections", collections=chosen, routed=True, fallback="router_picked_none")
            return chosen
        ctx.emit("collections", collections=chosen, routed=True)
        return chosen

    def invoke(self, query: str, dim: int | None = None, **kwargs: Any) -> tuple[list[str], int]:
        """DeepSearcher's contract: (selected collection names, tokens used); `authorized_collection_set`
        (or `authorized_collections`) limits the choice."""
        ctx = RunContext(authorized_collections=authorized_from(kwargs))
        chosen = run_sync(self.aroute(query, ctx))
        return chosen, ctx.total_tokens
