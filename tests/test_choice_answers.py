""" "A or B?" questions are answered by A or by B (issue 30's 1.5B run: "Which singer is American,
Mark King or Nick Hexum?" -> "American"), and a comparison without a comma before its pair is still
computed from the dates. Made-up names; the answer check runs on real passages, no LLM call."""

from __future__ import annotations

import pytest

from deepsearcher.agent.citations import group_sources
from deepsearcher.agent.comparison import choices
from deepsearcher.agent.grounding import check_answer
from deepsearcher.evaluation.scoring import answer_correct
from deepsearcher.types import RetrievalResult


def _sources(pages: dict[str, str]) -> list:
    return group_sources(
        [RetrievalResult(None, text, f"{title}.md", metadata={"title": title}) for title, text in pages.items()]
    )


SINGERS = {
    "Bo Lind": "Bo Lind (born 1970) is an American singer and songwriter from Ohio.",
    "Arne Vik": "Arne Vik (born 1961) is an English bass player and singer from the Isle of Wight.",
}


@pytest.mark.parametrize(
    ("written", "extracted"),
    [
        ("Answer: American\nBo Lind is an American singer [1].", "American"),  # the quality, not the name
        ("Answer: American\nBo Lind is an American singer [1].", ""),
        ("Bo Lind is an American singer and songwriter [1].", "Bo Lind"),
    ],
)
def test_a_choice_question_is_answered_by_the_one_choice_the_answer_names(written: str, extracted: str) -> None:
    checked = check_answer("Which singer is American, Arne Vik or Bo Lind?", written, _sources(SINGERS), extracted)
    assert checked.short_answer == "Bo Lind" and not checked.abstained


def test_a_short_answer_naming_both_choices_keeps_the_one_it_names_first() -> None:
    plants = {
        "Skrimweed": "Skrimweed is a genus of small herbs, rarely taller than 30 cm.",
        "Halmroot": "Halmroot is a genus of trees that grow up to 30 m tall.",
    }
    written = "Answer: Halmroot is larger than Skrimweed\nHalmroot trees grow up to 30 m tall [2]."
    checked = check_answer("Which plant is larger, the Skrimweed or the Halmroot?", written, _sources(plants))
    assert checked.short_answer == "Halmroot"


def test_a_comparison_with_no_comma_before_its_pair_is_computed_from_the_dates() -> None:
    bands = {
        "Frost Wolves": "Frost Wolves are a rock band from Bergen. Formed in 1997, they released four albums.",
        "Salt Crows": "Salt Crows is a rock band formed in early 2006 by three session players.",
    }
    written = "Answer: Salt Crows\nSalt Crows is a rock band formed in early 2006 [2]."
    checked = check_answer("Which band was formed first Frost Wolves or Salt Crows ?", written, _sources(bands))
    assert checked.short_answer == "Frost Wolves"
    assert "Frost Wolves: 1997" in checked.answer and "Salt Crows: 2006" in checked.answer


@pytest.mark.parametrize(
    ("question", "pair"),
    [
        ("Which band was formed first Frost Wolves or Salt Crows ?", ("Frost Wolves", "Salt Crows")),
        ("Which came first the forming of Frost Wolves or the birth of Bo Lind?", ("Frost Wolves", "Bo Lind")),
        ("Which singer is American, Arne Vik or Bo Lind?", ("Arne Vik", "Bo Lind")),
        ("Was Arne Vik or Bo Lind born first?", None),  # no pair at the end: the bridge's rule, not this
        ("Who wrote Salt Crows?", None),
    ],
)
def test_the_choices_of_a_question(question: str, pair: tuple[str, str] | None) -> None:
    assert choices(question) == pair


def test_a_longer_gold_answer_names_its_choice() -> None:
    """'Nicholas Lofton "Nick" Hexum' is the gold of "…, Mark King or Nick Hexum?": "Nick Hexum" is
    right, the other choice, both, or neither are not."""
    question, gold = "Which singer is American, Arne Vik or Bo Lind?", 'Bo "Bolle" Lind'
    assert answer_correct("Bo Lind", gold, question) == 1.0
    assert answer_correct("Arne Vik", gold, question) == 0.0
    assert answer_correct("Arne Vik or Bo Lind", gold, question) == 0.0
    assert answer_correct("American", gold, question) == 0.0
