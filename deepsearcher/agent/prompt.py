"""`deepsearcher.agent.prompt`, DeepSearcher's oldest path of the agents' prompts.

The three `get_*_prompt` functions of that module build the same prompts from today's
templates, so old code that prints or sends them keeps working.
"""

from collections.abc import Sequence
from typing import Any

from deepsearcher.agent.prompts import *  # noqa: F403 - the same prompts under the old module name
from deepsearcher.agent.prompts import ANSWER, ANSWER_STYLE_SHORT, COLLECTION_ROUTER, REFLECT

_MAX_QUERIES = 3


def get_vector_db_search_prompt(question: str, collection_info: Sequence[dict[str, Any]], context: Any = None) -> str:
    """The collection router's prompt for `question` over `{collection_name, collection_description}` rows."""
    lines = [f"{row.get('collection_name', '')}: {row.get('collection_description') or ''}" for row in collection_info]
    return COLLECTION_ROUTER.format(query=question, collections="\n".join(lines))


def _numbered(collections: Sequence[str], mini_questions: Sequence[str], mini_chunks: Sequence[str]) -> str:
    return "\n".join(
        f"[{index}] ({collection}; {sub_question}) {chunk}"
        for index, (collection, sub_question, chunk) in enumerate(
            zip(collections, mini_questions, mini_chunks, strict=False), 1
        )
    )


def get_reflect_prompt(
    question: str, collections: Sequence[str], mini_questions: Sequence[str], mini_chunks: Sequence[str]
) -> str:
    """The reflection prompt: what was searched, what was found, what is still missing."""
    return REFLECT.format(
        queries="\n".join(f"- {q}" for q in mini_questions),
        chunks=_numbered(collections, mini_questions, mini_chunks),
        question=question,
        max_queries=_MAX_QUERIES,
    )


def get_final_answer_prompt(
    question: str, collections: Sequence[str], mini_questions: Sequence[str], mini_chunks: Sequence[str]
) -> str:
    """The cited-answer prompt over the chunks found for each sub-question."""
    return ANSWER.format(
        question=question, sources=_numbered(collections, mini_questions, mini_chunks), style=ANSWER_STYLE_SHORT
    )
