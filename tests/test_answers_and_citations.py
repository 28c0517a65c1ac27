"""Answers that cite the page they come from and say when the documents don't hold the answer
(issue 30): the agents on a real Milvus Lite store with the real embedding model, the real
OpenAI provider against the scripted OpenAI-compatible server on 127.0.0.1 playing a small model
that writes no [n], gets a comparison wrong or invents a number."""

from __future__ import annotations

import pytest
import yaml
from helpers import ANSWER_PROMPT, FAST_RETRIES, JUDGE_PROMPT, SUB_QUERIES_PROMPT, components_for
from typer.testing import CliRunner

from deepsearcher.agent import DeepSearch, NaiveRAG, RAGRouter
from deepsearcher.agent.citations import attribute, group_sources, named_subjects, unmentioned_subjects
from deepsearcher.agent.deep_search import normalized_query
from deepsearcher.agent.extract import usable_extraction
from deepsearcher.agent.grounding import _item_explained, check_answer
from deepsearcher.agent.result import Source
from deepsearcher.cli.main import app
from deepsearcher.evaluation.dataset import load_dataset
from deepsearcher.evaluation.scoring import (
    answer_correct,
    citation_precision,
    citation_support,
    exact_match,
    is_abstention,
    token_f1,
)
from deepsearcher.evaluation.unanswerable import unanswerable_questions
from deepsearcher.mcp_server import DeepSearcherTools
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.store_corpus import make_chunks
from deepsearcher.types import RetrievalResult
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
REFLECT = "These queries were already searched"
MANUAL = "manuals/aurora.pdf"
NOTE = "notes/team.md"
MANUAL_PAGES = {
    3: "The Aurora Cell battery powered the Svalbard weather station through the polar night.",
    14: "Tomas Eriksen led the Aurora Cell project. Before that he designed the thermal system of an electric ferry.",
}
NOTE_TEXT = "The backup contact for the lab is Jonas Weber. The manager of the lab is Ingrid Dahl."
BIRTHS = {
    "Arne Solberg": "Arne Solberg (born 17 February 1944) is a Norwegian rower.",
    "Bjorn Lie": "Bjorn Lie (born 19 November 1927) was a Norwegian skier.",
}


@pytest.fixture
def store(milvus_uri: str, embedding):
    db = Milvus(uri=milvus_uri)
    db.init_collection(embedding.dimension, "docs", embedding_model=embedding.model_name)
    chunks = [
        *[
            make_chunks(embedding, [text], MANUAL, page=page, title="Aurora manual")[0]
            for page, text in MANUAL_PAGES.items()
        ],
        *make_chunks(embedding, [NOTE_TEXT], NOTE, section="Team > Contacts", title="Team notes"),
        *[make_chunks(embedding, [text], "people.jsonl", title=name)[0] for name, text in BIRTHS.items()],
    ]
    db.insert_data("docs", chunks)
    yield db
    db.close()


def naive(server, store, embedding, top_k: int = 6) -> NaiveRAG:
    return NaiveRAG(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, top_k=top_k)


def test_a_source_is_a_document_with_its_page_and_the_quote_that_supports_the_answer(server, store, embedding) -> None:
    # a small model's answer: no [n] at all, the name right
    server.on(
        ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project. The project ended in 1999."
    )
    result = naive(server, store, embedding).query_result("Who led the Aurora Cell project?", collections=["docs"])

    manual = next(source for source in result.sources if source.reference == MANUAL)
    assert sorted(p["page"] for p in manual.passages) == [3, 14]
    assert sum(1 for source in result.sources if source.reference == MANUAL) == 1  # two chunks, one source
    assert manual.cited and manual.page == 14 and manual.quote == "Tomas Eriksen led the Aurora Cell project."
    assert result.short_answer == "Tomas Eriksen" and not result.abstained
    first, second = result.claims
    assert first.citations == [manual.index] and first.how == "attributed"
    assert not second.supported  # no passage says when it ended
    assert (
        result.answer
        == f"Tomas Eriksen led the Aurora Cell project [{manual.index}]. The project ended in 1999 [unsupported]."
    )
    shape = result.to_dict()
    assert shape["short_answer"] == "Tomas Eriksen" and shape["claims"][0]["supported"] is True
    cited = next(s for s in shape["sources"] if s["reference"] == MANUAL)
    assert cited["page"] == 14 and cited["quote"] and cited["cited"] is True


def test_the_models_valid_citation_is_kept_a_wrong_one_replaced_an_unsupported_sentence_marked() -> None:
    results = [
        RetrievalResult(None, NOTE_TEXT, NOTE, {"section": "Team > Contacts", "title": "Team notes"}),
        RetrievalResult(None, MANUAL_PAGES[14], MANUAL, {"page": 14, "title": "Aurora manual"}),
    ]
    sources = group_sources(results)
    answer = "The backup contact is Jonas Weber [1]. Tomas Eriksen led the project [1]. The lab opened in 1887 [2]."
    cited, claims = attribute(answer, sources, "Who is the backup contact?")
    assert [claim.citations for claim in claims] == [[1], [2], []]
    assert [claim.how for claim in claims] == ["model", "attributed", "none"]
    assert cited == (
        "The backup contact is Jonas Weber [1]. Tomas Eriksen led the project [2]. "
        "The lab opened in 1887 [unsupported]."
    )
    assert (
        sources[0].section == "Team > Contacts" and sources[0].quote == "The backup contact for the lab is Jonas Weber."
    )


def test_an_invented_answer_becomes_not_found_with_what_was_found(server, store, embedding) -> None:
    server.on(ANSWER_PROMPT, "According to [1], the population of the Svalbard station in 1801 was 140.")
    result = naive(server, store, embedding).query_result(
        "What was the population of the Svalbard station in 1801?", collections=["docs"]
    )
    assert result.abstained and result.short_answer == "not found" and is_abstention(result.short_answer)
    assert result.answer.startswith("Not found in the documents: the answer “140” is not in any passage read.")
    assert "Aurora manual" in result.answer and "140" not in result.answer.split("What was found")[1]
    assert not any(source.cited for source in result.sources)
    assert any(step.kind == "abstained" for step in result.steps)


def test_a_question_about_what_no_document_mentions_is_not_answered(server, store, embedding) -> None:
    server.on(ANSWER_PROMPT, "Answer: 5,000\nThe Faroe Islands had 5,000 people [1].")
    result = naive(server, store, embedding).query_result(
        "What was the population of the Faroe Islands in 1801?", collections=["docs"]
    )
    assert result.abstained and "no passage read mentions Faroe Islands" in result.answer
    assert not any(r.prompt_text.startswith(ANSWER_PROMPT) for r in server.requests)  # nothing to invent from
    assert unmentioned_subjects("Who led the Aurora Cell project?", [MANUAL_PAGES[14]]) == []
    # the entity graph's heuristic finds the names; a word capitalised only because it opens the question is none
    assert named_subjects("Besides the Aurora Cell, what did Tomas Eriksen design?") == ["Aurora Cell", "Tomas Eriksen"]
    assert named_subjects("Faroe Islands population in 1801?") == ["Faroe Islands"]
    # a possessive's "s" is in every passage: the name without it is what must be mentioned
    question = "Who scored the first goal for Varngard Ostermere's team?"
    assert named_subjects(question) == ["Varngard Ostermere"]
    assert unmentioned_subjects(question, [NOTE_TEXT, "It's the team's first goal."]) == ["Varngard Ostermere"]
    # a place's adjective is mentioned by its place: "European" by a page on Europe, not by "Eureka"
    question = "King Albert I of a European country lived during a war that Italy entered when?"
    assert unmentioned_subjects(question, ["Albert I was king of Belgium, in Europe.", "Italy"]) == []
    assert unmentioned_subjects(question, ["Albert I was king of Eureka.", "Italy"]) == ["European"]


def test_a_comparison_is_computed_from_the_dates_not_the_models_conclusion(server, store, embedding) -> None:
    # both dates right, the conclusion wrong: what issue 30 saw from the 1.5B
    server.on(
        ANSWER_PROMPT,
        "Answer: Arne Solberg\nArne Solberg was born earlier, on 17 February 1944, while Bjorn Lie was born on "
        "19 November 1927.",
    )
    question = "Who was born first, Arne Solberg or Bjorn Lie?"
    result = naive(server, store, embedding).query_result(question, collections=["docs"])
    assert result.short_answer == "Bjorn Lie" and not result.abstained
    people = {source.title: source.index for source in result.sources}
    assert result.answer == (
        f"Compared from the sources' dates (Arne Solberg: 1944 [{people['Arne Solberg']}]; "
        f"Bjorn Lie: 1927 [{people['Bjorn Lie']}]): Bjorn Lie."
    )  # the model's wrong conclusion is dropped
    assert answer_correct(result.short_answer, "Bjorn Lie", question) == 1.0
    assert answer_correct("Arne Solberg or Bjorn Lie", "Bjorn Lie", question) == 0.0


def test_deep_search_keeps_a_searchs_first_hit_and_never_repeats_a_sub_query(server, store, embedding) -> None:
    server.on(SUB_QUERIES_PROMPT, '["Aurora Cell project leader"]')
    server.on(JUDGE_PROMPT, lambda r: "YES" if "weather station" in r.last_user_message.split("Passage:")[-1] else "NO")
    server.on(REFLECT, '["aurora cell project LEADER?", "Tomas Eriksen earlier designs"]')
    server.on(ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project.")
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=2, top_k=2)
    result = agent.query_result("Who led the Aurora Cell project?", collections=["docs"])

    searched = [step.data["query"] for step in result.steps if step.kind == "search"]
    assert len({normalized_query(q) for q in searched}) == len(searched)  # the shouting duplicate is not searched
    reflection = next(step for step in result.steps if step.kind == "reflection")
    assert reflection.data["queries"] == ["Tomas Eriksen earlier designs"] and reflection.data["repeated"] == 1
    judged = [step.data for step in result.steps if step.kind == "judge"]
    assert judged[0]["kept_first"] >= 1  # the judge said NO to the page that names him; search ranked it first
    assert any(r.text == MANUAL_PAGES[14] for r in result.retrieved_results)
    assert result.short_answer == "Tomas Eriksen" and any(s.cited and s.reference == MANUAL for s in result.sources)


def test_auto_does_not_route_a_half_billion_model_to_an_iterative_agent(server, store, embedding) -> None:
    server.on(ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project.")
    llm = server.llm(model="qwen2.5-coder-0.5b-instruct", **FAST_RETRIES)
    agents = [
        DeepSearch(llm=llm, embedding_model=embedding, vector_db=store),
        NaiveRAG(llm=llm, embedding_model=embedding, vector_db=store),
    ]
    result = RAGRouter(llm=llm, rag_agents=agents).query_result(
        "Who led the Aurora Cell project?", collections=["docs"]
    )
    route = next(step for step in result.steps if step.kind == "route")
    assert route.data["agent"] == "NaiveRAG" and "0.5B" in route.data["reason"]
    assert not any(r.prompt_text.startswith("You route a question") for r in server.requests)


def test_eval_scores_and_the_generated_unanswerable_split(tmp_path) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "questions.jsonl").write_text(
        '{"id": "1", "question": "Who founded Krafla Works?", "answer": "Ada Berg", "gold_titles": ["Krafla Works"]}\n'
        '{"id": "2", "question": "Is Krafla Works old?", "answer": "yes", "gold_titles": ["Krafla Works"]}\n',
        encoding="utf-8",
    )
    (folder / "corpus.jsonl").write_text(
        '{"title": "Krafla Works", "text": "Ada Berg founded it."}\n', encoding="utf-8"
    )
    made = unanswerable_questions(load_dataset(folder), 5)
    assert len(made) == 1 and "Krafla Works" not in made[0].question and made[0].id == "unanswerable-1"
    assert answer_correct("founded by Ada Berg", "Ada Berg") == 1.0 and answer_correct("Berg", "Ada Berg") == 0.0
    larger = "Which plant is larger, the Pterocarya or the Cotula?"  # any "A or B?" question, not only dates
    assert answer_correct("Cotula is larger than Pterocarya", "Pterocarya", larger) == 0.0
    assert answer_correct("the Pterocarya", "Pterocarya", larger) == 1.0
    assert citation_precision(["Ada Berg founded it.", "Other text."], "Ada Berg") == 0.5
    assert citation_precision([], "Ada Berg") is None and citation_precision(["x"], "yes") is None
    # an alias "NO" (Norway's code) does not make a question yes/no
    assert citation_precision(["Ibsen was Norway's playwright.", "Not that one."], ["Norway", "NO"]) == 0.5
    assert answer_correct("no one knows", ["Norway", "NO"]) == 0.0 and answer_correct("No", ["no"]) == 1.0
    assert exact_match("No", ["Norway", "NO"]) == 0.0 and token_f1("No", ["Norway", "NO"]) == 0.0
    # support: the cited sources holding the answer given, right or wrong; none for an abstention
    assert citation_support(["Ada Berg founded it.", "Other text."], "Other text") == 0.5
    assert citation_support(["Ada Berg founded it."], "not found") is None
    assert check_answer("Who founded it?", "The documents do not mention it.", []).abstained


@pytest.fixture
def config_path(tmp_path, milvus_uri: str, server, embedding):
    """A config over a closed store holding the manual (the CLI and MCP open it themselves)."""
    db = Milvus(uri=milvus_uri)
    db.init_collection(embedding.dimension, "docs", embedding_model=embedding.model_name)
    db.insert_data("docs", [make_chunks(embedding, [MANUAL_PAGES[14]], MANUAL, page=14, title="Aurora manual")[0]])
    db.close()
    settings = {
        "provide_settings": {
            "llm": server.llm_config(retry_base_delay=0.01),
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        },
        "server": {"data_dir": str(tmp_path / "data")},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def test_cli_short_format_and_mcp_show_the_short_answer_page_and_quote(server, config_path) -> None:
    server.on(ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project.")
    question = "Who led the Aurora Cell project?"
    shown = CliRunner().invoke(
        app, ["query", question, "--agent", "naive", "--format", "short", "-c", str(config_path)]
    )
    assert shown.exit_code == 0, shown.output
    assert "Answer: Tomas Eriksen" in shown.stdout
    assert "Tomas Eriksen led the Aurora Cell project [1]." not in shown.stdout  # short: no explanation
    assert '[1] manuals/aurora.pdf (Aurora manual, p. 14): "Tomas Eriksen led the Aurora Cell project."' in shown.stdout

    reply = DeepSearcherTools(components_for(config_path)).deep_search(question, agent="naive")
    assert reply["short_answer"] == "Tomas Eriksen" and reply["abstained"] is False
    assert (
        reply["sources"][0]["page"] == 14
        and reply["sources"][0]["quote"] == "Tomas Eriksen led the Aurora Cell project."
    )


def test_eval_summary_reports_accuracy_abstention_and_a_per_question_table(tmp_path) -> None:
    from deepsearcher.evaluation.report import markdown_table, summarize, write_report

    def row(id_: str, **values: object) -> dict:
        base = {"agent": "deep", "max_iter": 1, "retrieved_titles": ["A"], "gold_titles": ["A"], "error": None}
        return {"id": id_, "gold_answer": "Ada", "short_answer": "Ada", **base, **values}

    rows = [
        row("1", accuracy=1.0, abstained=False, citation_precision=1.0),
        row("2", accuracy=0.0, abstained=True, citation_precision=None, short_answer="not found"),
        row("unanswerable-3", unanswerable=True, abstained=True, gold_titles=["Varnholt"]),
        row("unanswerable-4", unanswerable=True, abstained=False, gold_titles=["Varnholt"]),
    ]
    summary = summarize(rows, [1])
    group = summary["groups"][0]
    assert group["accuracy"] == 0.5 and group["abstention"] == 0.5 and group["citation_precision"] == 1.0
    assert group["recall"]["1"] == 1.0  # the unanswerable rows' made-up titles do not count as misses
    assert "| deep | 1 | 4 | 1.000 | 1.000 | 0.500 | 0.500 | 1.000 |" in markdown_table(summary)
    document = (tmp_path / "summary.md").read_text() if write_report(summary, tmp_path) else ""
    assert "| unanswerable-4 | deep@1 | Ada | Ada | answered (invented) | – |" in document
    assert "| 2 | deep@1 | Ada | not found | abstained | – |" in document


def test_rest_returns_the_short_answer_and_sources_with_page_and_quote(server, config_path) -> None:
    import httpx

    from deepsearcher.config import Configuration
    from deepsearcher.server.app import create_app
    from deepsearcher.server.runner import ServerThread

    server.on(ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project.")
    with ServerThread(create_app(Configuration(str(config_path)))) as running:
        reply = httpx.post(
            running.url + "/v1/query",
            json={"question": "Who led the Aurora Cell project?", "agent": "naive"},
            timeout=60,
        )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (
        body["short_answer"] == "Tomas Eriksen" and body["answer"] == "Tomas Eriksen led the Aurora Cell project [1]."
    )
    source = body["sources"][0]
    assert source["cited"] and source["page"] == 14 and source["quote"] == "Tomas Eriksen led the Aurora Cell project."
    assert body["claims"] == [
        {"text": "Tomas Eriksen led the Aurora Cell project.", "citations": [1], "supported": True, "how": "attributed"}
    ]


def test_reflection_that_finds_nothing_missing_still_searches_a_name_no_kept_passage_mentions(
    server, store, embedding
) -> None:
    server.on(SUB_QUERIES_PROMPT, '["Aurora Cell project leader"]')
    server.on(JUDGE_PROMPT, lambda r: "YES" if "Aurora" in r.last_user_message.split("Passage:")[-1] else "NO")
    server.on(REFLECT, "[]")  # a small model: "enough found"
    server.on(ANSWER_PROMPT, "Answer: Tomas Eriksen\nTomas Eriksen led the Aurora Cell project.")
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=2, top_k=1)
    result = agent.query_result("Who led the Aurora Cell project that Jonas Weber backed up?", collections=["docs"])
    reflection = next(step for step in result.steps if step.kind == "reflection")
    assert reflection.data["unmentioned"] == ["Jonas Weber"] and reflection.data["queries"] == ["Jonas Weber"]
    assert "Jonas Weber" in [step.data["query"] for step in result.steps if step.kind == "search"]
    assert any(r.reference == NOTE for r in result.retrieved_results)


def test_a_short_answer_that_restates_the_question_is_cut_from_the_explanation() -> None:
    sources = group_sources([RetrievalResult(None, "In the era of Haymo books were translated into Latin.", "h.txt")])
    question = "What language were books translated into during the era of Haymo?"
    written = (
        "Answer: The language books were translated into during the era of Haymo\nThey were translated into Latin."
    )
    checked = check_answer(question, written, sources)
    assert checked.short_answer == "Latin" and not checked.abstained


def test_sentences_do_not_end_after_a_title_or_an_initial() -> None:
    from deepsearcher.agent.citations import split_sentences

    text = 'He lived in the USA. Leland directed "Mr. Smith" in 1986. G. Stanley Hall was first [1]. Done.'
    assert split_sentences(text) == [
        "He lived in the USA.",
        'Leland directed "Mr. Smith" in 1986.',
        "G. Stanley Hall was first [1].",
        "Done.",
    ]


def test_the_models_own_source_list_is_dropped_and_the_answer_stated() -> None:
    sources = group_sources([RetrievalResult(None, "In the era of Haymo books were translated into Latin.", "h.txt")])
    written = "Answer: Latin\nExplanation: See the sources.\nSources: [1] and [2]\n[1] (Haymo (friar)) [2] (Latin)"
    checked = check_answer("What language were books translated into in the era of Haymo?", written, sources)
    assert checked.short_answer == "Latin" and "Sources:" not in checked.answer and "(Haymo" not in checked.answer
    assert checked.answer.startswith("Latin [1].") and checked.claims[0].citations == [1]


def test_a_short_answer_that_cannot_answer_the_question_is_recut_from_the_explanation() -> None:
    """Issue 30's 1.5B short answers: a source label copied, the question's own name given back, no
    number for "how many"; the explanation held the answer each time."""
    haymo = group_sources(
        [RetrievalResult(None, "Haymo's books were translated into Latin.", "h.txt", {"title": "Haymo"})]
    )
    label = check_answer("What language were Haymo's books translated into?", "Answer: (Haymo)\nLatin [1].", haymo)
    assert label.short_answer == "Latin" and not label.abstained
    inside = check_answer("What language were Haymo's books translated into?", "Answer: in (Haymo)\nLatin.", haymo)
    assert inside.short_answer == "Latin"
    station = group_sources([RetrievalResult(None, "The Svalbard station ran on 4 cells since 2022.", "s.txt")])
    count = check_answer(
        "How many cells ran the Svalbard station?", "Answer: Svalbard station\nIt ran on 4 cells.", station
    )
    assert count.short_answer == "4" and not count.abstained
    year = check_answer("When did the Svalbard station start?", "Answer: the station\nIt started in 2022 [1].", station)
    assert year.short_answer == "2022"
    bevan = group_sources([RetrievalResult(None, "Thomas Bevan played rugby.", "b.txt", {"title": "Thomas Bevan"})])
    echoed = check_answer("David Jones played which sport?", "[1] (Thomas Bevan)", bevan)
    assert echoed.abstained and echoed.short_answer == "not found"  # a source's label is no answer
    choice = check_answer("Did the station run on 4 or 5 cells?", "Answer: 4\nIt ran on 4 cells.", station)
    assert choice.short_answer == "4"  # a choice the question offers stays
    passage = check_answer(
        "Which of the two stations ran on cells?", "Passage 2 [1]. The Svalbard station ran on 4 cells [1].", station
    )
    # the label the model was shown is no answer: the explanation's own sentence is
    assert "4" in passage.short_answer and "Passage" not in passage.answer and not passage.abstained


EXTRACT_PROMPT = "Read the passages, then answer the question with only the words"


def test_the_short_answer_is_the_extracted_words_not_the_explanations_wrong_role(server, store, embedding) -> None:
    """The 1.5B's failure mode: the right words, the wrong role ("the manager" for the backup). One
    short extraction call over the first passages in search order gives the short answer; the
    explanation is made to state it, and it is cited."""
    server.on(EXTRACT_PROMPT, "Jonas Weber.")
    server.on(ANSWER_PROMPT, "Answer: Ingrid Dahl\nIngrid Dahl manages the lab [1].")
    result = naive(server, store, embedding).query_result(
        "Who is the backup contact for the lab?", collections=["docs"]
    )
    assert result.short_answer == "Jonas Weber" and not result.abstained
    assert result.answer.startswith("Jonas Weber [")
    note = next(source for source in result.sources if source.reference == NOTE)
    assert note.cited and "Jonas Weber" in (note.quote or "")
    extraction = next(r.prompt_text for r in server.requests if r.prompt_text.startswith(EXTRACT_PROMPT))
    assert "(a person's or group's name)" in extraction and extraction.count("Passage ") <= 4
    assert extraction.index("Jonas Weber") < extraction.index("Aurora Cell")  # search order: the note first
    assert result.usage_by_step["extract"].calls == 1


@pytest.mark.parametrize(
    ("question", "extracted", "usable"),
    [
        ("Who is the backup contact for the lab?", "Jonas Weber", True),
        ("Who is the backup contact for the lab?", "not found", False),
        ("Who is the backup contact for the lab?", "the backup contact", False),  # only the question's words
        ("Who is the backup contact for the lab?", "Karl Renner", False),  # in no passage read
        ("What is Team notes about?", "Team notes", False),  # the title the question asks about
        ("How many people run the lab?", "Jonas Weber", False),  # no number where one is asked
        ("Is Jonas Weber the backup contact?", "Yes", True),
        ("Was Arne Solberg or Bjorn Lie born first?", "Bjorn Lie", True),  # a choice the question names
        ("Which of the two rowers was born first?", "Passage 2", False),  # a passage's label, not an answer
        ("Who is the backup contact for the lab's manager?", "manager's", False),  # a possessive: still its words
        ("Who is the backup contact for the lab?", "Jonas Lund", False),  # a two-word name: both words read
        ("Who is the backup contact for the lab?", "Jónas Weber", True),  # accents do not count
        ("Arne Solberg is a rower who was born when?", "a Norwegian rower", False),  # a date asked last, none given
        ("Arne Solberg is a rower who was born when?", "17 February 1944", True),
        ("Rowing boats like his were first built when?", "the early twentieth century", True),  # a date in words
    ],
)
def test_an_extracted_answer_stands_only_when_it_can_answer(question: str, extracted: str, usable: bool) -> None:
    texts = [NOTE_TEXT, *BIRTHS.values()]
    assert usable_extraction(extracted, question, ["Team notes", *BIRTHS], texts) is usable


def test_an_unusable_extraction_leaves_the_models_own_short_answer() -> None:
    passage = {"text": NOTE_TEXT, "page": None, "section": None}
    sources = [Source(index=1, reference=NOTE, text=NOTE_TEXT, passages=[passage])]
    written = "Answer: Jonas Weber\nThe backup contact for the lab is Jonas Weber."
    for extracted in ("not found", "Karl Renner", ""):
        checked = check_answer("Who is the backup contact for the lab?", written, sources, extracted)
        assert checked.short_answer == "Jonas Weber" and not checked.abstained
    # an extraction listing more names than the model's own grounded answer adds nothing but names
    checked = check_answer("Who is the backup contact for the lab?", written, sources, "Ingrid Dahl, Jonas Weber")
    assert checked.short_answer == "Jonas Weber"
    # of an extraction listing several, the one the explanation's first sentence states
    assert _item_explained("Ingrid Dahl, Jonas Weber", "Jonas Weber backs the lab up [1]. Ingrid Dahl runs it.") == (
        "Jonas Weber"
    )
    assert _item_explained("Ingrid Dahl, Jonas Weber", "Both work there.") == "Ingrid Dahl, Jonas Weber"
    # a yes/no question the model answered itself keeps its answer (the extraction reads only 4 passages)
    yes_no = "Is Jonas Weber the manager of the lab?"
    checked = check_answer(yes_no, "Answer: No\nThe manager of the lab is Ingrid Dahl [1].", sources, "yes")
    assert checked.short_answer == "No"
    checked = check_answer(yes_no, "The manager of the lab is Ingrid Dahl [1].", sources, "no")
    assert checked.short_answer == "no"
    checked = check_answer("Who is the backup contact for the lab?", written, sources, "Ingrid Dahl")
    # the explanation is written around the extracted answer: the passage sentence that holds it, cited
    assert checked.short_answer == "Ingrid Dahl"
    assert checked.answer.endswith("The manager of the lab is Ingrid Dahl [1].")
    assert "Jonas Weber" not in checked.answer


def test_deep_search_judges_nothing_when_no_retrieved_passage_names_the_subject(server, store, embedding) -> None:
    """The abstention check looks at every passage retrieved, before the judge: a question about a
    name no search found costs DeepSearch its sub-queries only (a generated unanswerable question
    made 15+ judge calls on the 1.5B)."""
    server.on(SUB_QUERIES_PROMPT, '["Faroe Islands census 1801"]')
    agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=2)
    result = agent.query_result("What was the population of the Faroe Islands in 1801?", collections=["docs"])
    assert result.abstained and "no passage read mentions Faroe Islands" in result.answer
    sent = [r.prompt_text for r in server.requests]
    assert len(sent) == 1 and sent[0].startswith(SUB_QUERIES_PROMPT), "no judge, reflection or answer call"
    judge = next(step for step in result.steps if step.kind == "judge")
    assert judge.data["judged"] == 0 and judge.data["skipped"] == "no passage retrieved mentions Faroe Islands"


def titled_sources(pages: dict[str, str]) -> list[Source]:
    """One source per page, titled, numbered from 1 in the order given."""
    return group_sources(
        [RetrievalResult(None, text, f"{title}.txt", {"title": title}) for title, text in pages.items()]
    )


#: pages read for "What body of water is near the location where the Siege of Varn took place?"
VARN_PAGES = {
    "Siege of Varn": "The Siege of Varn took place at Holmfjord in 1702.",
    "Holmfjord": "Holmfjord is a town that lies on the river Elva.",
    "Lake Tessa": "Lake Tessa is a lake in the Rocky Mountains.",
}
VARN_QUESTION = "What body of water is near the location where the Siege of Varn took place?"
#: pages read for the county bordering Johnnycake's: "United States" is on every page but one
JOHNNYCAKE_PAGES = {
    "Johnnycake": "Johnnycake is a hamlet in McDowell County, West Virginia, United States.",
    "Derwent": "Derwent is a village in Guernsey County, Ohio, United States.",
    "Iaeger": "Iaeger is a town in West Virginia, United States.",
    "Welch": "Welch is a city in West Virginia, United States.",
    "Tazewell County": "Tazewell County borders McDowell County.",
}
JOHNNYCAKE_QUESTION = "What county shares a border with the county in which Johnnycake, West Virginia is located?"

#: pages read for a question on a rugby player who shares his name with a merchant
DAVID_JONES_PAGES = {
    "David Jones (rugby)": "David Jones was a Welsh dual-code international rugby union and rugby league player.",
    "Department store": "David Jones, a Welsh merchant, opened a store in Sydney in 1825.",
    "Rugby league": "Rugby league was started in 1895.",
}
DAVID_JONES_QUESTION = "David Jones is an international in rugby union and another sport that was started when?"

UNLINKED = [
    # issue 30's 1.5B copied "Lake Oesa" from a page saying nothing of the Siege of Cassel nor of
    # any place a Cassel page names
    pytest.param(
        VARN_PAGES,
        VARN_QUESTION,
        "Answer: Lake Tessa\nLake Tessa is a lake [3].",
        "no passage holding “Lake Tessa” is about Siege of Varn",
        id="a-page-naming-nothing-asked",
    ),
    # "Guernsey" (an Ohio county): its page shares only "County" with "McDowell County" and
    # "United States", which nearly every page read mentions, with the Johnnycake page
    pytest.param(
        JOHNNYCAKE_PAGES,
        JOHNNYCAKE_QUESTION,
        "Answer: Guernsey County\nDerwent is in Guernsey County [2].",
        "no passage holding “Guernsey County” is about Johnnycake",
        id="one-word-of-a-name-and-a-name-most-pages-share",
    ),
    # "EA Sports" from a NASCAR game's page, which holds "world", "drivers" and "championship"
    # but not "World Drivers' Championship"
    pytest.param(
        {
            "Eddie Irvine": "Eddie Irvine was the runner-up in the 1999 World Drivers' Championship.",
            "Kart Rally": "Kart Rally has drivers race the world in a championship. It was published by Arts Sports.",
        },
        "The runner-up in the 1999 World Drivers' Championship is on the cover of a game published by what company?",
        "Answer: Arts Sports\nKart Rally was published by Arts Sports [2].",
        "no passage holding “Arts Sports” is about World Drivers' Championship",
        id="a-names-words-apart",
    ),
    # "1825" from the page on the David Jones who founded a Sydney store: it holds the name and shares
    # "Welsh" with the rugby player's page, but the question says "rugby" and that page is titled so
    pytest.param(
        DAVID_JONES_PAGES,
        DAVID_JONES_QUESTION,
        "Answer: 1825\nDavid Jones opened a store in Sydney in 1825 [2].",
        "no passage holding “1825” is about David Jones",
        id="a-namesake",
    ),
]


@pytest.mark.parametrize(("pages", "question", "written", "refusal"), UNLINKED)
def test_an_answer_from_a_page_unlinked_to_the_question_is_not_given(
    pages: dict[str, str], question: str, written: str, refusal: str
) -> None:
    """A passage holding the answer must be about a name of the question (holding it as a phrase)
    or share a name, not one most pages read share, with a passage that is."""
    checked = check_answer(question, written, titled_sources(pages))
    assert checked.abstained and refusal in checked.answer


def test_an_answer_on_the_bridge_page_or_the_hops_page_stands() -> None:
    """An answer on the bridge page (it shares "Holmfjord" with the page about the siege, or
    "McDowell County" with Johnnycake's) stands; so does one linked by a hop's rewritten question."""
    bridged = check_answer(
        VARN_QUESTION, "Answer: the river Elva\nThe river Elva runs by Holmfjord [2].", titled_sources(VARN_PAGES)
    )
    assert bridged.short_answer == "the river Elva" and not bridged.abstained
    linked = check_answer(
        JOHNNYCAKE_QUESTION,
        "Answer: Tazewell County\nTazewell County borders McDowell County [5].",
        titled_sources(JOHNNYCAKE_PAGES),
    )
    assert linked.short_answer == "Tazewell County" and not linked.abstained
    # the namesake's page is set aside, not the player's: the sport his page names links
    # the namesake's page is set aside, not the player's: the sport his page names links, and a
    # sentence only the namesake's page supports is not cited
    sources = titled_sources(DAVID_JONES_PAGES)
    written = "Answer: 1895\nRugby league was started in 1895 [3]. David Jones opened a store in Sydney [2]."
    league = check_answer(DAVID_JONES_QUESTION, written, sources)
    assert league.short_answer == "1895" and not league.abstained and "1895 [3]" in league.answer
    assert "Sydney [unsupported]" in league.answer and [source.cited for source in sources] == [False, False, True]
    # a hop's answer links too: the question its bridge rewrote names Holmfjord
    village = RetrievalResult(None, "Varn is a village by the sea.", "varn.txt", {"title": "Varn"})
    pages = [RetrievalResult(None, text, f"{title}.txt", {"title": title}) for title, text in VARN_PAGES.items()]
    hopped = group_sources([village, *pages][::2])
    written = "Answer: the river Elva\nIt runs by Holmfjord [2]."  # read: Varn, Holmfjord (not the siege's page)
    assert check_answer(VARN_QUESTION, written, hopped).abstained
    rewritten = check_answer(VARN_QUESTION, written, hopped, rewritten="What body of water is near Holmfjord?")
    assert rewritten.short_answer == "the river Elva" and not rewritten.abstained


def test_a_short_answer_naming_the_hops_answer_again_is_recut_or_not_found() -> None:
    """DeepSearch rewrote "the country where Aschen's composer was a citizen" to "Austria"; the
    model's "Answer: Austria" answers the hop, not the question, so the explanation's new words are
    the answer. Without the rewritten question, "Austria" stands (it is not the question's word)."""
    pages = {
        "Aschen": "Aschen is an opera by Hans Vogl, a composer from Austria.",
        "Austria": "Austria was led by Karl Renner.",
    }
    sources = titled_sources(pages)
    question = "Who was in charge of the country where the composer of Aschen was a citizen?"
    written = "Answer: Austria\nAustria was led by Karl Renner [2]."
    assert check_answer(question, written, sources).short_answer == "Austria"
    rewritten = check_answer(question, written, sources, rewritten="Who was in charge of Austria?")
    assert "Karl Renner" in rewritten.short_answer and "Austria" not in rewritten.short_answer
    # nothing but the hop's answer and a common word ("his son C. P. E. Bach"): "not found"
    bach = "Answer: Austria\nIt was written in Austria by his son [2]."
    assert check_answer(question, bach, sources, rewritten="Who was in charge of Austria?").abstained


def test_the_models_citation_of_a_page_sharing_one_word_is_replaced_by_the_page_that_says_it() -> None:
    """The 1.5B cited the page on Richard Bach's novel for "…in the hand of his son Carl Philipp
    Emanuel Bach [1]": one word in common. The page that states the sentence is cited instead."""
    pages = {
        "Seagull": "Seagull is a novella by Richard Bach about a bird.",
        "Flute Sonata": "The manuscript of the Flute Sonata is in the hand of Carl Philipp Emanuel Bach, his son.",
    }
    sources = titled_sources(pages)
    answer = "The manuscript of the Flute Sonata is in the hand of his son Carl Philipp Emanuel Bach [1]."
    cited, claims = attribute(answer, sources, "In whose hand is the manuscript of the Flute Sonata?")
    assert claims[0].citations == [2] and claims[0].how == "attributed" and cited.endswith("Bach [2].")
    assert not sources[0].cited and sources[1].cited


def test_a_hops_answer_is_not_the_answer_unless_both_ask_for_the_same_thing() -> None:
    """DeepSearch's hop found the composer's country ("Austria") but could not stand it; the model
    then answered "Austria" to "Who was in charge of …": "not found". Where the question asks the
    noun its hop asked ("In which country …" after "What is the country where …") it stands."""
    pages = {
        "Aschen": "Aschen is an opera by Hans Vogl, a composer from Austria.",
        "Vogl": "Hans Vogl lived in Austria.",
    }
    sources = titled_sources(pages)
    question = "Who was in charge of the country where the composer of Aschen was a citizen?"
    hops = [("What is the country where Hans Vogl was a citizen?", "Austria")]
    written = "Answer: Austria\nHans Vogl lived in Austria [2]."
    assert check_answer(question, written, sources).short_answer == "Austria"  # no hop: nothing to tell
    again = check_answer(question, written, sources, extracted="Austria", hop_answers=hops)
    assert again.abstained and "answers the hop, not the question" in again.answer
    same_noun = "In which country did the composer of Aschen live?"
    assert check_answer(same_noun, written, sources, hop_answers=hops).short_answer == "Austria"


def test_the_name_of_one_university_does_not_answer_what_kind_of_university() -> None:
    """The 1.5B answered "What kind of university did the author of … attend?" with "Newark College of
    Arts and Sciences", her college's name; the kind ("a land-grant university") was in no page read."""
    pages = {"Judith Viorst": "Viorst is a graduate of the Newark College of Arts and Sciences."}
    question = "What kind of university did Judith Viorst attend?"
    college = "Newark College of Arts and Sciences"
    written = f"Answer: {college}\nViorst is a graduate of the {college} [1]."
    checked = check_answer(question, written, titled_sources(pages))
    assert checked.abstained and "names one university, not a kind of university" in checked.answer
    kind = check_answer(
        question,
        "Answer: a land-grant university\nShe attended a land-grant university [1].",
        titled_sources({"Judith Viorst": "Viorst attended a land-grant university."}),
    )
    assert kind.short_answer == "a land-grant university" and not kind.abstained


def test_a_sentence_only_an_unrelated_page_supports_is_not_cited() -> None:
    """The 1.5B cited a page on Harry Potter's translations beside the one stating "Latin" for Haymo
    of Faversham's era. A page neither about the question's names nor holding the answer is not
    cited: its sentence is marked unsupported."""
    pages = {
        "Haymo of Faversham": "Haymo of Faversham was a friar in the era of the Recovery of Aristotle.",
        "Recovery of Aristotle": "In the Recovery of Aristotle Greek books were translated into Latin.",
        "Harry Potter in translation": "Harry Potter has been translated into eighty languages.",
    }
    sources = titled_sources(pages)
    question = "What language were books being translated into during the era of Haymo of Faversham?"
    unrelated = "Harry Potter has been translated into eighty languages [3]."
    written = f"Answer: Latin\nGreek books were translated into Latin [2]. {unrelated}"
    checked = check_answer(question, written, sources)
    assert checked.short_answer == "Latin" and "Latin [2]" in checked.answer
    assert "eighty languages [unsupported]" in checked.answer and not sources[2].cited and sources[1].cited
