"""Bridge questions answered hop by hop (issue 30: the 1.5B answered every MuSiQue question with its
first hop): the grammar that finds the bridge phrases, and DeepSearch following a two-hop chain on
a real Milvus Lite store with the real embedding model, the scripted OpenAI-compatible server on
127.0.0.1 playing the model (made-up documents and questions)."""

from __future__ import annotations

import re

import pytest
from helpers import ANSWER_PROMPT, FAST_RETRIES, SUB_QUERIES_PROMPT

from deepsearcher.agent import DeepSearch
from deepsearcher.agent.bridge import bridge_phrases, hop_question
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.store_corpus import make_chunks
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
EXTRACT = "Read the passages, then answer the question with only the words"
DOCUMENTS = {
    "Cold Meridian": "Cold Meridian is a 1998 novel written by Halvard Brekke about a winter on a trawler.",
    "Halvard Brekke": "Halvard Brekke studied at the University of Bergen before he became a writer.",
    "Salt Harbour": "Salt Harbour is a 2004 novel by Ingrid Vang, set in a fishing town.",
}


@pytest.mark.parametrize(
    ("question", "hops"),
    [
        (
            "Who is the current mayor of the town where the Veltria Creek is found?",
            ["What is the town where the Veltria Creek is found?"],
        ),
        (
            "Which river runs through the birthplace of the author of Cold Meridian?",
            ["Who is the author of Cold Meridian?"],  # the innermost first
        ),
        ("Where was Silver Lanterns's performer born?", ["Who is Silver Lanterns's performer?"]),
        ("Who was the first king of Oskar Lund's country?", ["What is Oskar Lund's country?"]),
        (
            "In which region of the country where the Tana Falls is located did the reform begin?",
            ["What is the country where the Tana Falls is located?"],  # the clause ends before "did"
        ),
        ("Who is the spouse of Lil Varden?", []),  # asks for the phrase itself: the last hop
        ("Was Arne Solberg or Bjorn Lie born first?", []),  # a choice: compared, not chained
        ("When did the city where the Winter Games will be held fall?", []),  # clause end unknown
        ("What is Norway's national anthem?", []),  # an adjective, not a role
        ("What is the voice of Rosie in the series?", []),  # no named thing the role belongs to
        ("Who built the first compiler and in which year?", []),  # "and in which" joins two questions
    ],
)
def test_the_bridge_phrases_of_a_question_are_found_by_their_grammar(question: str, hops: list[str]) -> None:
    assert [hop_question(phrase) for phrase in bridge_phrases(question)] == hops


@pytest.fixture
def store(milvus_uri: str, embedding):
    db = Milvus(uri=milvus_uri)
    db.init_collection(embedding.dimension, "books", embedding_model=embedding.model_name)
    chunks = [make_chunks(embedding, [text], f"{title}.md", title=title)[0] for title, text in DOCUMENTS.items()]
    db.insert_data("books", chunks)
    yield db
    db.close()


def _extraction_for(question: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(EXTRACT)}.*Question: {re.escape(question)}\n", re.S)


def test_deep_search_follows_the_bridge_and_answers_the_second_hop(server, store, embedding) -> None:
    """The hop is asked and searched on its own, its answer replaces the phrase, and the concise
    answer is extracted for the rewritten question from its own search, read first."""
    question = "Which university did the author of Cold Meridian attend?"
    server.on(SUB_QUERIES_PROMPT, '["Cold Meridian author"]')
    server.on(_extraction_for("Who is the author of Cold Meridian?"), "Halvard Brekke")
    server.on(_extraction_for("Which university did Halvard Brekke attend?"), "University of Bergen")
    server.on(ANSWER_PROMPT, "Answer: Halvard Brekke\nCold Meridian was written by Halvard Brekke [1].")
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=1)
    result = agent.query_result(question, collections=["books"])

    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data == {"query": "Who is the author of Cold Meridian?", "answer": "Halvard Brekke", "used": True}
    searched = [step.data["query"] for step in result.steps if step.kind == "search"]
    assert "Which university did Halvard Brekke attend?" in searched
    assert result.short_answer == "University of Bergen" and not result.abstained
    cited = [source.reference for source in result.sources if source.cited]
    assert "Halvard Brekke.md" in cited
    assert result.usage_by_step["bridge"].calls == 1 and result.usage_by_step["extract"].calls == 1


def test_a_hop_that_cannot_be_answered_ends_the_chain_and_deep_search_answers_as_before(
    server, store, embedding
) -> None:
    """A hop answered "not found" is reported unused; the question is not rewritten and the
    concise answer is extracted for the question as asked."""
    question = "Which university did the author of Salt Harbour attend?"
    server.on(SUB_QUERIES_PROMPT, '["Salt Harbour author"]')
    server.on(_extraction_for("Who is the author of Salt Harbour?"), "not found")
    server.on(_extraction_for(question), "not found")
    server.on(ANSWER_PROMPT, "The documents do not say which university.")
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=1)
    result = agent.query_result(question, collections=["books"])
    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data["used"] is False
    assert not any(step.data.get("query") == "Which university did Ingrid Vang attend?" for step in result.steps)
    extractions = [r.prompt_text for r in server.requests if r.prompt_text.startswith(EXTRACT)]
    assert any(f"Question: {question}\n" in text for text in extractions)
