"""Questions answered part by part (issue 30): bridge questions hop by hop (the 1.5B answered every
MuSiQue question with its first hop) and "Are X and Y both P?" per thing (it answered "yes").
The grammar that finds the parts, and DeepSearch answering them on a real Milvus Lite store with
the real embedding model, the scripted OpenAI-compatible server on 127.0.0.1 playing the model
(made-up documents and questions)."""

from __future__ import annotations

import json
import re

import pytest
from helpers import ANSWER_PROMPT, FAST_RETRIES, SUB_QUERIES_PROMPT

from deepsearcher.agent import DeepSearch
from deepsearcher.agent.both import parts, stated_of
from deepsearcher.agent.bridge import _stands, bridge_phrases, hop_question
from deepsearcher.agent.citations import naming_first
from deepsearcher.agent.trailing import trailing_ask
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.store_corpus import make_chunks
from deepsearcher.types import RetrievalResult
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
EXTRACT = "Read the passages, then answer the question with only the words"
DOCUMENTS = {
    "Cold Meridian": "Cold Meridian is a 1998 novel written by Halvard Brekke about a winter in a harbour.",
    "Halvard Brekke": "Halvard Brekke studied at the University of Bergen before he became a writer.",
    "Salt Harbour": "Salt Harbour is a 2004 novel by Ingrid Vang, a Norwegian writer, set in a fishing town.",
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
        (
            "Who directed the film that was shot near Varnholm, North Dakota in 1986?",
            ["What is the film that was shot near Varnholm, North Dakota in 1986?"],  # a place's comma
        ),
        ("Lena Moor voiced Tilly on the sitcom that premiered on which date?", []),  # the clause is asked
        (
            "How many shops are in the state that borders the east of the state where Arne Vik lived when he died?",
            ["What is the state where Arne Vik lived when he died?"],  # the inner one, inside another
        ),
        ("When did the country where the city where Arne Vik was born is located refuse it?", []),  # subject
    ],
)
def test_the_bridge_phrases_of_a_question_are_found_by_their_grammar(question: str, hops: list[str]) -> None:
    assert [hop_question(phrase) for phrase in bridge_phrases(question)] == hops


@pytest.mark.parametrize(
    ("question", "hop", "then"),
    [
        (
            "Kate Varne is a character from an Icelandic soap opera created by who?",
            "Kate Varne is a character from which Icelandic soap opera?",
            "By whom was NAME created?",
        ),
        (
            "The manuscript of the Sonata in Q is in the hand of a Danish organist whose godfather is whom?",
            "The manuscript of the Sonata in Q is in the hand of which Danish organist?",
            "Who is NAME's godfather?",
        ),
        (
            "Ola Berg's first novel was published by a small publishing house that was founded in 2005,"
            " and is based where?",
            "Ola Berg's first novel was published by which small publishing house?",
            "Where is NAME based?",
        ),
        (
            "Tom Lid voiced Rosie on the animated sitcom that originally premiered on which date?",
            "Tom Lid voiced Rosie on which animated sitcom?",
            "NAME originally premiered on which date?",
        ),
        (
            "The runner-up of the 1999 Nordic Rally appears on the cover of a racing game developed by what company?",
            "The runner-up of the 1999 Nordic Rally appears on the cover of which racing game?",
            "By what company was NAME developed?",
        ),
    ],
)
def test_a_declarative_question_asking_about_its_last_thing_names_the_thing_first(
    question: str, hop: str, then: str
) -> None:
    """The thing is asked for with "which" in place of its article; the asking part becomes a
    question about the thing's name once it is known."""
    tail = trailing_ask(question)
    assert tail is not None and (tail.hop, tail.asked_of("NAME")) == (hop, then)


@pytest.mark.parametrize(
    "question",
    [
        "Who directed the film that was shot in Varnholm?",  # a question word first: not declarative
        "Is Kate Varne a character from an Icelandic soap opera?",  # yes or no
        "Kate Varne is father to which Icelandic actress?",  # no thing before the question word
        "Kate Varne is a consultant who has worked with the mayor of what city?",  # the thing is Kate Varne
        "There is a country where trains ran. Who built the line in the city that won which prize?",  # 2 sentences
    ],
)
def test_other_questions_have_no_trailing_ask(question: str) -> None:
    assert trailing_ask(question) is None


def test_a_quoted_thing_needs_no_hop() -> None:
    tail = trailing_ask('Tor Vik was the story editor for the show "Frost Hare" which was written by who?')
    assert tail is not None and tail.named == "Frost Hare"
    assert tail.asked_of(tail.named) == "By whom was Frost Hare written?"


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


def _deep_search(server, store, embedding, question: str, replies: list[tuple[object, str]]):
    """DeepSearch (one round) over the books store, the scripted model giving `replies` (prompt
    pattern, reply)."""
    for prompt, reply in replies:
        server.on(prompt, reply)
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=1)
    return agent.query_result(question, collections=["books"])


def _both_asked(server, store, embedding, question: str, said: list[str], written: str):
    """DeepSearch on an "Are X and Y both P?" question: its things searched, each part's
    extraction answered `said` (in order), the answer `written`."""
    asked = parts(question)
    return _deep_search(
        server,
        store,
        embedding,
        question,
        [
            (SUB_QUERIES_PROMPT, json.dumps([part.name for part in asked])),
            *((_extraction_for(part.question), word) for part, word in zip(asked, said, strict=True)),
            (ANSWER_PROMPT, written),
        ],
    )


SALT_HARBOUR_QUESTION = "Which university did the author of Salt Harbour attend?"


def _salt_harbour_hop_answered(server, store, embedding, hop_answer: str):
    """DeepSearch on SALT_HARBOUR_QUESTION, its hop ("Who is the author of Salt Harbour?") answered
    `hop_answer`, the question itself "not found"."""
    return _deep_search(
        server,
        store,
        embedding,
        SALT_HARBOUR_QUESTION,
        [
            (SUB_QUERIES_PROMPT, '["Salt Harbour author"]'),
            (_extraction_for("Who is the author of Salt Harbour?"), hop_answer),
            (_extraction_for(SALT_HARBOUR_QUESTION), "not found"),
            (ANSWER_PROMPT, "The documents do not say which university."),
        ],
    )


def test_deep_search_follows_the_bridge_and_answers_the_second_hop(server, store, embedding) -> None:
    """The hop is asked and searched on its own, its answer replaces the phrase, and the concise
    answer is extracted for the rewritten question from its own search, read first."""
    question = "Which university did the author of Cold Meridian attend?"
    result = _deep_search(
        server,
        store,
        embedding,
        question,
        [
            (SUB_QUERIES_PROMPT, '["Cold Meridian author"]'),
            (_extraction_for("Who is the author of Cold Meridian?"), "Halvard Brekke"),
            (_extraction_for("Which university did Halvard Brekke attend?"), "University of Bergen"),
            (ANSWER_PROMPT, "Answer: Halvard Brekke\nCold Meridian was written by Halvard Brekke [1]."),
        ],
    )

    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data == {"query": "Who is the author of Cold Meridian?", "answer": "Halvard Brekke", "used": True}
    searched = [step.data["query"] for step in result.steps if step.kind == "search"]
    assert "Which university did Halvard Brekke attend?" in searched
    assert result.short_answer == "University of Bergen" and not result.abstained
    cited = [source.reference for source in result.sources if source.cited]
    assert "Halvard Brekke.md" in cited
    assert result.usage_by_step["bridge"].calls == 1 and result.usage_by_step["extract"].calls == 1
    # the hop reads only the passages holding its name, the only ones its answer may stand on
    hop_prompt = next(r.prompt_text for r in server.requests if _extraction_for(hop.data["query"]).match(r.prompt_text))
    assert DOCUMENTS["Cold Meridian"] in hop_prompt
    assert DOCUMENTS["Salt Harbour"] not in hop_prompt and DOCUMENTS["Halvard Brekke"] not in hop_prompt


def test_a_hop_that_cannot_be_answered_ends_the_chain_and_deep_search_answers_as_before(
    server, store, embedding
) -> None:
    """A hop answered "not found" is reported unused; the question is not rewritten and the
    concise answer is extracted for the question as asked."""
    question = SALT_HARBOUR_QUESTION
    result = _salt_harbour_hop_answered(server, store, embedding, "not found")
    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data["used"] is False
    assert not any(step.data.get("query") == "Which university did Ingrid Vang attend?" for step in result.steps)
    extractions = [r.prompt_text for r in server.requests if r.prompt_text.startswith(EXTRACT)]
    assert any(f"Question: {question}\n" in text for text in extractions)


def test_deep_search_names_the_thing_a_declarative_question_ends_on_then_asks_about_it(
    server, store, embedding
) -> None:
    """ "…by a Norwegian writer who studied at which university?": the writer is named first (one
    bridge call; its passage names "Cold Meridian", not "Norwegian"), then the question about him is
    searched and its concise answer extracted."""
    question = "Cold Meridian is a 1998 novel by a Norwegian writer who studied at which university?"
    hop_question_asked = "Cold Meridian is a 1998 novel by which Norwegian writer?"
    result = _deep_search(
        server,
        store,
        embedding,
        question,
        [
            (SUB_QUERIES_PROMPT, '["Cold Meridian writer"]'),
            (_extraction_for(hop_question_asked), "Halvard Brekke"),
            (_extraction_for("Halvard Brekke studied at which university?"), "University of Bergen"),
            (ANSWER_PROMPT, "Answer: Halvard Brekke\nCold Meridian was written by Halvard Brekke [1]."),
        ],
    )

    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data == {"query": hop_question_asked, "answer": "Halvard Brekke", "used": True}
    searched = [step.data["query"] for step in result.steps if step.kind == "search"]
    assert "Halvard Brekke studied at which university?" in searched
    assert result.short_answer == "University of Bergen" and not result.abstained
    assert result.usage_by_step["bridge"].calls == 1 and result.usage_by_step["extract"].calls == 1


def test_an_extraction_that_names_the_hops_answer_again_is_not_the_short_answer(server, store, embedding) -> None:
    """Asked "Halvard Brekke studied at which university?", a small model may copy the name it was
    given: that is the thing the question is about, so the written answer's own short answer stands."""
    question = "Cold Meridian is a 1998 novel by a writer who studied at which university?"
    result = _deep_search(
        server,
        store,
        embedding,
        question,
        [
            (SUB_QUERIES_PROMPT, '["Cold Meridian writer"]'),
            (_extraction_for("Cold Meridian is a 1998 novel by which writer?"), "Halvard Brekke"),
            (_extraction_for("Halvard Brekke studied at which university?"), "Halvard Brekke"),
            (ANSWER_PROMPT, "Answer: University of Bergen\nHalvard Brekke studied at the University of Bergen [1]."),
        ],
    )
    assert result.short_answer == "University of Bergen" and not result.abstained


def test_a_hop_answer_from_a_passage_about_something_else_ends_the_chain(server, store, embedding) -> None:
    """ "Halvard Brekke" is in a passage, but not in one that names Salt Harbour (his book's page
    shares only the word "harbour"): the hop's answer was read from another book's page, so the
    question is answered as asked."""
    result = _salt_harbour_hop_answered(server, store, embedding, "Halvard Brekke")
    hop = next(step for step in result.steps if step.kind == "intermediate_answer")
    assert hop.data == {"query": "Who is the author of Salt Harbour?", "answer": "Halvard Brekke", "used": False}
    assert not any(step.data.get("query") == "Which university did Halvard Brekke attend?" for step in result.steps)


def test_a_hop_answer_stands_in_a_passage_naming_the_hops_subject_by_an_initial() -> None:
    """ "J. Strauss II" names Johann Strauss II: the orchestra's page, which says it plays him in
    Vienna, Austria, states his country (issue 30: MuSiQue's Aschenbrodel question); "Strauss II"
    alone, or a "J." before another word, does not."""
    asked = "What is the country where Johann Strauss II was a citizen?"
    question = "Who was in charge of the country where Johann Strauss II was a citizen?"

    def stands(text: str) -> bool:
        return _stands("Austria", asked, ["Vienna Walzer Orchestra"], [text], question)

    assert stands("The orchestra, based in Vienna, Austria, plays waltzes by J. Strauss II.")
    assert not stands("The orchestra, based in Vienna, Austria, plays waltzes by Strauss II.")
    assert not stands("The orchestra, based in Vienna, Austria, plays J. Lanner and Strauss II.")


def test_a_hop_answer_stands_only_where_the_hops_name_is_held_close_together() -> None:
    """A middle name may come between a name's words; words scattered over a page do not make the
    name: the Colin McRae Rally page ("their drivers … the 1998 World Rally Championship") does not
    say who was runner-up in the World Drivers' Championship."""
    asked = "The runner-up in the 1999 World Drivers' Championship appears on the cover of which game?"
    question = f"{asked[:-1]} developed by what company?"
    rally = "Colin McRae Rally features cars (and their drivers) from the 1998 World Rally Championship."
    assert not _stands("Colin McRae Rally", asked, ["Colin McRae Rally"], [rally], question)
    formula = "Formula One Arcade shows the runner-up in the 1999 World Drivers' Championship on its cover."
    assert _stands("Formula One Arcade", asked, ["Formula One Arcade"], [formula], question)
    middle = "Francis Michael Durango Magalona was born in Mandaluyong City."
    assert _stands("Mandaluyong City", "What is the birthplace of Francis Magalona?", [], [middle], "Where?")


def test_passages_holding_a_hops_name_whole_are_read_before_those_sharing_a_word() -> None:
    """The hop "What is the river which the Tekeze River turns into?" was answered "Squamish River":
    a page sharing only "River" with the hop's name was read as early as the Atbarah's."""
    squamish = RetrievalResult(None, "The Squamish River flows into Howe Sound.", "s.txt", {"title": "Squamish River"})
    atbarah = RetrievalResult(None, "The Tekeze River joins the Atbarah River.", "a.txt", {"title": "Atbarah River"})
    tekeze = RetrievalResult(None, "It rises in Ethiopia.", "t.txt", {"title": "Tekeze River"})
    other = RetrievalResult(None, "Howe Sound is a bay.", "h.txt", {"title": "Howe Sound"})
    ordered = naming_first([other, squamish, atbarah, tekeze], ["Tekeze River"])
    assert [result.title for result in ordered] == ["Tekeze River", "Atbarah River", "Squamish River", "Howe Sound"]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        (
            "Are Arne Vik and Bo Lind both film directors?",
            ["Is Arne Vik a film director?", "Is Bo Lind a film director?"],
        ),
        (
            "Are both magazines, the Frost Review and Salt Weekly, Danish publications?",
            ["Is the Frost Review a Danish publication?", "Is Salt Weekly a Danish publication?"],
        ),
        ("Are both Skrim and Halma board games?", ["Is Skrim a board game?", "Is Halma a board game?"]),
        ("Were Arne Vik and Bo Lind both born in Oslo?", ["Was Arne Vik born in Oslo?", "Was Bo Lind born in Oslo?"]),
        ("Are Vik Airport and Lind Airport both airports in the same state?", []),  # together, not each
        ("Is Arne Vik a film director?", []),
    ],
)
def test_a_both_question_is_asked_of_each_thing(question: str, asked: list[str]) -> None:
    assert [part.question for part in parts(question)] == asked


def test_deep_search_answers_a_both_question_from_each_things_answer_not_the_models_yes(
    server, store, embedding
) -> None:
    """Each thing is asked about over the passages naming it first; one "no" makes the answer
    "no" though the written answer says yes."""
    question = "Are Cold Meridian and Halvard Brekke both novels?"
    result = _both_asked(server, store, embedding, question, ["Yes", "No"], "Answer: Yes\nBoth are novels [1].")

    assert result.short_answer == "no"
    assert result.answer.startswith(
        "No, asked of each: “Is Cold Meridian a novel”: yes; “Is Halvard Brekke a novel”: no"
    )
    answered = {step.data["query"]: step.data["answer"] for step in result.steps if step.kind == "intermediate_answer"}
    assert answered == {"Is Cold Meridian a novel?": "yes", "Is Halvard Brekke a novel?": "no"}
    assert result.usage_by_step["both"].calls == 2 and "extract" not in result.usage_by_step
    shown = next(r.prompt_text for r in server.requests if "Question: Is Halvard Brekke a novel?" in r.prompt_text)
    assert shown.index("(Halvard Brekke)") < shown.index("(Cold Meridian)")  # its own page first


def test_a_yes_no_passage_about_the_thing_states_is_no(server, store, embedding) -> None:
    """The model's "yes" for a part stands only when the passages about that thing hold the
    predicate's names: Cold Meridian's page never says "Norwegian" (Salt Harbour's does)."""
    question = "Are Cold Meridian and Salt Harbour both Norwegian novels?"
    written = "Answer: Yes\nBoth are Norwegian novels [1]."
    result = _both_asked(server, store, embedding, question, ["Yes", "Yes"], written)

    assert result.short_answer == "no"
    assert "“Is Cold Meridian a Norwegian novel”: no (its passages do not say so)" in result.answer
    assert "“Is Salt Harbour a Norwegian novel”: yes" in result.answer


@pytest.mark.parametrize(
    ("question", "stated"),
    [
        ("Are Cold Meridian and Salt Harbour both novels?", [True, True]),  # a plain word, in each page
        ("Are Cold Meridian and Salt Harbour both Norwegian novels?", [False, True]),  # the name must be there
        ("Were Cold Meridian and Salt Harbour both published in 1998?", [True, False]),  # so must the number
        ("Are Cold Meridian and Halvard Brekke both painters?", [False, False]),  # no word of it at all
    ],
)
def test_a_part_is_stated_only_by_passages_about_its_own_thing(question: str, stated: list[bool]) -> None:
    results = [RetrievalResult(None, text, title, {"title": title}) for title, text in DOCUMENTS.items()]
    assert [stated_of(part, results) for part in parts(question)] == stated
