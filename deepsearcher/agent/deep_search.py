"""DeepSearch: decompose, search everything at once, judge every chunk, reflect, repeat, report."""

from __future__ import annotations

import re
from typing import Any

from deepsearcher.agent import prompts
from deepsearcher.agent.base import RAGAgent, describe_class
from deepsearcher.agent.both import decide
from deepsearcher.agent.bridge import resolve_chain
from deepsearcher.agent.citations import content_words, mentions_name, named_nowhere, unmentioned_subjects
from deepsearcher.agent.context import RunContext, all_at_once, both_at_once
from deepsearcher.agent.options import IterativeOptions, TopK
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.graph import follow_up_queries
from deepsearcher.llm.base import BaseLLM
from deepsearcher.llm.errors import LLMOutputError
from deepsearcher.llm.parsing import parse_list, parse_yes_no
from deepsearcher.types import RetrievalResult, deduplicate_results
from deepsearcher.vector_db.base import BaseVectorDB

MAX_SUB_QUERIES = 4
MAX_GAP_QUERIES = 3
#: the rewritten question's passages read before the bridge hops' own (agent/bridge.py)
BRIDGE_LEAD = 3
#: Reciprocal-rank fusion's constant (Cormack et al., 2009): among chunks of the same best rank,
#: the one with the larger sum of 1 / (RRF_K + rank) over the searches that found it comes first.
RRF_K = 60


class RankFusion:
    """Several searches' ranked results in one order, by chunk text: each search's first hits
    before any search's second ones, then agreement between searches (the reciprocal-rank sum).
    Search scores of different queries are not comparable, their ranks are. The best rank leads
    because a multi-hop question's sub-queries each look for another hop: summing ranks alone let
    chunks that every paraphrase of the question finds push out the one chunk a bridging
    sub-query found first. benchmarks/agents_real_llm.py, 0.5B, 20 questions a set, the same
    searches ordered both ways: MuSiQue R@5 0.612 -> 0.637, HotpotQA 0.800 either way."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.best: dict[str, int] = {}
        #: the first search's chunks (the whole question's: what naive RAG reads), read first in its order
        self.lead: dict[str, int] = {}

    def add(self, ranked: list[RetrievalResult]) -> None:
        """One search's results, best first; the first search added leads the order."""
        if not self.sums:
            self.lead = {result.text: rank for rank, result in enumerate(ranked, start=1)}
        for rank, result in enumerate(ranked, start=1):
            self.sums[result.text] = self.sums.get(result.text, 0.0) + 1.0 / (RRF_K + rank)
            self.best[result.text] = min(self.best.get(result.text, rank), rank)

    def key(self, result: RetrievalResult) -> tuple[int, int, float]:
        """Larger is better: the whole question's own results first in search order (DeepSearch
        never reads less well than naive RAG: a small model answers from the first passages), then
        (minus the best rank, the reciprocal-rank sum); unseen chunks last."""
        lead = self.lead.get(result.text)
        return -(lead or 1 << 30), -self.best.get(result.text, 1 << 30), self.sums.get(result.text, 0.0)

    def ranked(self, results: list[RetrievalResult]) -> list[RetrievalResult]:
        """`results` de-duplicated, in fused order (ties keep their order)."""
        return sorted(deduplicate_results(results), key=self.key, reverse=True)


class DeepSearchOptions(IterativeOptions):
    """Fewer chunks per search than the others: every chunk found is judged by the LLM."""

    top_k: TopK = 5


@register_provider("agent", "deep")
@describe_class(
    "This agent suits general and multi-part questions and report writing: it breaks the question into "
    "sub-questions, searches them all, keeps only relevant passages, reflects on what is missing and "
    "searches again before writing a detailed answer."
)
class DeepSearch(RAGAgent):
    """All searches and judgements of one iteration run concurrently (bounded by the LLM's limit)."""

    Options = DeepSearchOptions
    max_iter: int
    iterative = True
    route_rank = 1
    label = "deep search"

    def __init__(
        self,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        max_iter: int | None = None,
        top_k: int | None = None,
        report: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(llm, embedding_model, vector_db, max_iter=max_iter, top_k=top_k, **kwargs)
        if report:
            self.answer_style = prompts.ANSWER_STYLE_REPORT

    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        """The first iteration searches the question itself besides its sub-queries: a small model's
        sub-queries can miss what the question names. What the judge keeps comes back in fused
        order; when it keeps nothing, the `top_k` best fused chunks (a `fallback` step)."""
        max_iter = ctx.option("max_iter", self.max_iter)
        top_k = ctx.option("top_k", self.top_k)
        queries = _unique([query, *await self._sub_queries(query, ctx)])
        if not collections:
            return []
        fusion = RankFusion()
        accepted: list[RetrievalResult] = []
        relevant = 0  # passages the judge itself kept (a search's first hit is kept besides)
        retrieved: list[RetrievalResult] = []
        judged_texts: set[str] = set()
        searched: list[str] = []
        bridged: list[RetrievalResult] = []
        for iteration in range(1, max_iter + 1):
            if iteration > 1 and ctx.budget_exhausted():  # the first iteration always runs: something to answer from
                break
            searched.extend(queries)
            judging = self._search_and_judge(query, queries, collections, top_k, judged_texts, ctx, iteration, fusion)
            if iteration == 1:  # the bridges are followed while the first round is judged
                (kept, found, judge_kept), bridged = await both_at_once(
                    judging, self._follow_bridges(query, ctx, collections, top_k)
                )
            else:
                kept, found, judge_kept = await judging
            accepted.extend(kept)
            relevant += judge_kept
            retrieved.extend(found)
            if iteration == max_iter or ctx.budget_exhausted() or ctx.extra.get("nothing_named"):
                break
            queries = await self._reflect(query, searched, accepted, ctx, iteration)
            queries = _unique([*queries, *follow_up_queries(query, fusion.ranked(kept), [*searched, *queries])])
            if not queries:
                break
        if relevant:
            chosen = fusion.ranked([*accepted, *_naming_passages(query, accepted, fusion.ranked(retrieved))])
        else:
            chosen = self._fallback(retrieved, ctx, "judge", keep=top_k, key=fusion.key)
        return deduplicate_results([*bridged, *chosen])

    async def _follow_bridges(
        self, query: str, ctx: RunContext, collections: list[str], top_k: int
    ) -> list[RetrievalResult]:
        """The passages of the question's bridge chain (agent/bridge.py), read first: the rewritten
        question's best ones, then each hop's first; none when the question has no bridge or a
        hop could not be answered. The rewritten question is kept for the concise answer."""

        async def search(text: str) -> list[RetrievalResult]:
            return await self.retriever.asearch(text, collections, top_k=top_k, **ctx.store_kwargs)

        chain = await resolve_chain(query, search, self.llm, ctx)
        if not chain.resolved:
            return []
        final = await search(chain.question)
        ctx.emit(
            "search",
            iteration=1,
            query=chain.question,
            collections=collections,
            retrieved=len(final),
            accepted=len(final),
        )
        ctx.rewritten_question = chain.question
        hop_firsts = [hop.passages[0] for hop in chain.hops if hop.passages]
        return [*final[:BRIDGE_LEAD], *hop_firsts, *final[BRIDGE_LEAD:]]

    async def _extract(self, question: str, shown: list[RetrievalResult], ctx: RunContext) -> str:
        """The concise answer of the question its bridges rewrote ("Who was in charge of Austria?"),
        when they were followed: asked the original, a small model names the first hop's answer.
        "Are X and Y both P?" is asked of each instead (agent/both.py)."""
        decision = await decide(question, shown, self.llm, ctx)
        if decision is not None:  # "Are X and Y both P?": asked of each, combined in code
            ctx.decided = decision
            return decision.answer
        rewritten = ctx.rewritten_question
        extracted = await super()._extract(rewritten or question, shown, ctx)
        if rewritten and set(content_words(extracted)) <= set(content_words(rewritten)):
            return ""  # "Helen Hunt" for "Helen Hunt starred in what for seven years?": the hop's answer again
        return extracted

    async def _sub_queries(self, query: str, ctx: RunContext) -> list[str]:
        sub_queries = await ctx.structured(
            self.llm,
            prompts.SUB_QUERIES.format(query=query, max_queries=MAX_SUB_QUERIES),
            parse_list,
            "sub_queries",
            json_mode=True,
        )
        queries = _unique(sub_queries)[:MAX_SUB_QUERIES] or [query]
        ctx.emit("sub_queries", queries=queries)
        return queries

    # DeepSearcher's step methods: one step on its own, returning (value, tokens used) --------
    def _generate_sub_queries(self, original_query: str, **kwargs: Any) -> tuple[list[str], int]:
        return self._run_step(lambda ctx: self._sub_queries(original_query, ctx), **kwargs)

    def _generate_gap_queries(
        self, original_query: str, all_sub_queries: list[str], all_chunks: list[RetrievalResult], **kwargs: Any
    ) -> tuple[list[str], int]:
        return self._run_step(lambda ctx: self._reflect(original_query, all_sub_queries, all_chunks, ctx, 0), **kwargs)

    async def _search_chunks_from_vectordb(
        self, query: str, sub_queries: list[str] | None = None, **kwargs: Any
    ) -> tuple[list[RetrievalResult], int]:
        """Route, search `sub_queries` (default: `query`) and keep the chunks the LLM judges relevant,
        in fused order."""
        ctx = self._step_context(kwargs)
        collections = await self._collections(query, ctx, None)
        top_k = ctx.option("top_k", self.top_k)
        fusion = RankFusion()
        kept, _, _ = await self._search_and_judge(
            query, sub_queries or [query], collections, top_k, set(), ctx, 1, fusion
        )
        return fusion.ranked(kept), ctx.total_tokens

    @staticmethod
    def _format_chunk_texts(chunk_texts: list[str]) -> str:
        return "".join(f"<chunk_{i}>\n{text}\n</chunk_{i}>\n" for i, text in enumerate(chunk_texts))

    async def _search_and_judge(
        self,
        question: str,
        queries: list[str],
        collections: list[str],
        top_k: int,
        judged_texts: set[str],
        ctx: RunContext,
        iteration: int,
        fusion: RankFusion,
    ) -> tuple[list[RetrievalResult], list[RetrievalResult], int]:
        """(the chunks kept: the judge's and each search's first hit, every new chunk retrieved, how
        many the judge itself kept); every search's ranking goes into
        `fusion`, chunks judged before included. Each chunk is judged once, against the question and
        every sub-query that retrieved it: in a multi-hop question the first sub-query to find a
        chunk is often not the one it answers."""
        found = await all_at_once(
            self.retriever.asearch(q, collections, top_k=top_k, **ctx.store_kwargs) for q in queries
        )
        by_text: dict[str, tuple[RetrievalResult, list[str]]] = {}
        for sub_query, results in zip(queries, found, strict=False):
            fusion.add(results)
            for result in results:
                if result.text in judged_texts:  # judged (and paid for) in an earlier iteration
                    continue
                entry = by_text.setdefault(result.text, (result, []))
                if sub_query not in entry[1]:
                    entry[1].append(sub_query)
        judged_texts.update(by_text)
        candidates = list(by_text.values())
        if iteration == 1 and candidates:
            nowhere = named_nowhere(question, [result.text for results in found for result in results])
            if nowhere:  # nothing retrieved names anything the question asks about: judging it is wasted
                ctx.emit(
                    "judge", iteration=iteration, judged=0, accepted=0, unparseable=0, kept_first=0, skipped=nowhere
                )
                ctx.extra["nothing_named"] = nowhere
                return [], [result for result, _ in candidates], 0
        verdicts = await all_at_once(self._judge(question, asked, result, ctx) for result, asked in candidates)
        # the passage a search ranks first is never silently dropped: a small model's judge says NO to
        # passages that hold the answer (issue 30: it rejected the one search ranked first)
        firsts = {results[0].text for results in found if results}
        accepted = [
            result
            for (result, _), verdict in zip(candidates, verdicts, strict=False)
            if verdict or result.text in firsts
        ]
        kept_first = len(accepted) - sum(1 for verdict in verdicts if verdict)
        kept_texts = {result.text for result in accepted}
        for sub_query, results in zip(queries, found, strict=False):
            kept = sum(1 for result in results if result.text in kept_texts)
            ctx.emit(
                "search",
                iteration=iteration,
                query=sub_query,
                collections=collections,
                retrieved=len(results),
                accepted=kept,
            )
        unparsed = sum(1 for verdict in verdicts if verdict is None)
        ctx.emit(
            "judge",
            iteration=iteration,
            judged=len(candidates),
            accepted=len(accepted),
            unparseable=unparsed,
            kept_first=kept_first,
        )
        return accepted, [result for result, _ in candidates], len(accepted) - kept_first

    async def _judge(self, question: str, asked: list[str], result: RetrievalResult, ctx: RunContext) -> bool | None:
        """YES/NO relevance of one chunk; an answer that stays unparseable after the repair is a NO (counted)."""
        queries = "\n".join(f"- {q}" for q in asked)
        prompt = prompts.JUDGE_CHUNK.format(question=question, queries=queries, chunk=result.text)
        try:
            judged: bool | None = await ctx.structured(self.llm, prompt, parse_yes_no, "judge")
            return judged
        except LLMOutputError:
            return None

    async def _reflect(
        self,
        question: str,
        searched: list[str],
        accepted: list[RetrievalResult],
        ctx: RunContext,
        iteration: int,
    ) -> list[str]:
        chunks = "\n".join(f"- {result.text[:500]}" for result in accepted) or "(none)"
        prompt = prompts.REFLECT.format(
            queries="\n".join(f"- {q}" for q in searched),
            chunks=chunks,
            question=question,
            max_queries=MAX_GAP_QUERIES,
        )
        gaps = await ctx.structured(self.llm, prompt, parse_list, "reflection", json_mode=True)
        asked = {normalized_query(q) for q in searched}
        fresh = [q for q in _unique(gaps) if normalized_query(q) not in asked][:MAX_GAP_QUERIES]
        repeated = len(_unique(gaps)) - len(fresh) if len(_unique(gaps)) <= MAX_GAP_QUERIES else 0
        unmentioned: list[str] = []
        if not fresh:  # "enough found" stops only when the kept passages mention what the question names
            names = unmentioned_subjects(question, [result.text for result in accepted])
            unmentioned = [name for name in names if normalized_query(name) not in asked][:MAX_GAP_QUERIES]
            fresh = unmentioned
        ctx.emit("reflection", iteration=iteration, queries=fresh, repeated=repeated, unmentioned=unmentioned)
        return fresh


def _naming_passages(
    question: str, kept: list[RetrievalResult], retrieved: list[RetrievalResult]
) -> list[RetrievalResult]:
    """For each name of the question no kept passage mentions, the best retrieved passage that does:
    the judge dropped it, and without it the answer check abstains where naive RAG answered
    (issue 30: "Jack Owens")."""
    added: list[RetrievalResult] = []
    for name in unmentioned_subjects(question, [result.text for result in kept]):
        hit = next((r for r in retrieved if mentions_name(r.text, name) and r not in added), None)
        if hit is not None:
            added.append(hit)
    return added


def normalized_query(query: str) -> str:
    """A sub-query's identity: case, punctuation and spacing aside ("Lothair Ii" is "Lothair II")."""
    return " ".join(re.sub(r"[^\w\s]", " ", str(query).casefold()).split())


def _unique(items: list[str]) -> list[str]:
    """`items` stripped, without blanks and without repeats after normalisation (first kept)."""
    seen: dict[str, str] = {}
    for item in items:
        item = str(item).strip()
        if item and normalized_query(item) not in seen:
            seen[normalized_query(item)] = item
    return list(seen.values())
